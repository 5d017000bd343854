/**
 * The PostgreSQL store given hostile input (issue 15, ADR-0280): quotes, backslashes, spaces and
 * unicode stored byte for byte; NUL round-trips in a blob or an event and is refused by name in a
 * key; a 12 MB blob and a 2 MB event whole; a part the database cannot store commits nothing of
 * its save. Needs the test cluster (JR2_TEST_PG_URL).
 */
import { expect, it } from "vitest";
import { describePg } from "./pg.js";
import { pgInstances } from "./pg-instances.js";
import { blob, event, eventually, LEASE_MS, refusal } from "./pg-store-fixture.js";

describePg("the PostgreSQL store given hostile input (ADR-0280)", () => {
  const pgs = pgInstances("jr2_hostile", LEASE_MS);
  const { runId } = pgs;
  const instance = pgs.instance.bind(pgs);

  it("stores run ids, workflows and payloads with quotes, backslashes, spaces and unicode byte for byte", async () => {
    const a = await instance("A");
    const b = await instance("B");
    const id = `r'"\\; DROP TABLE runs; -- ü 🙂 ${runId()}`;
    const workflow = `w'"\\ $1 %s 🙂`;
    const seen: number[] = [];
    b.notices.subscribe(id, (seq) => seen.push(seq));
    const text = `'"\\\\ \n\t ${"é".repeat(3)} 🙂 \u2028`;
    const stored = blob(id, { workflow, input: { text } });
    await a.save(
      stored,
      [
        {
          iid: "i'1",
          turnId: "t\\1",
          toolCallId: 'c"1',
          scope: "s'",
          answer: { delivered: true, turnComplete: false, allowed: [text] },
        },
      ],
      [],
      [event(0, text)],
    );
    expect(await a.load(id)).toEqual(stored);
    expect((await a.list({ workflow }))[0]?.runId).toBe(id);
    expect(await a.events(id, 0, 10)).toEqual([event(0, text)]);
    expect(await a.pickAnswer(id, { iid: "i'1", turnId: "t\\1", toolCallId: 'c"1' })).toMatchObject({
      answer: { delivered: true, turnComplete: false, allowed: [text] },
    });
    expect((await a.live()).map((r) => r.runId)).toContain(id);
    await eventually(() => seen.includes(0));
  });

  it("a NUL (U+0000) in a blob or an event round-trips; in a key it is refused by name and a read by it finds nothing", async () => {
    const a = await instance("A");
    const id = runId();
    const nul = "a\u0000b";
    const stored = blob(id, { input: { nul } });
    await a.save(stored, [], [], [event(0, nul)]);
    expect(await a.load(id)).toEqual(stored);
    expect(await a.events(id, 0, 10)).toEqual([event(0, nul)]);
    const refused = await refusal(
      a.save(blob(id), [
        {
          iid: "i",
          turnId: "t",
          toolCallId: nul,
          scope: "s",
          answer: { delivered: true, turnComplete: false, allowed: [] },
        },
      ]),
    );
    expect(refused.message).toMatch(/NUL \(U\+0000\)/);
    expect(await a.pickAnswer(id, { iid: "i", turnId: "t", toolCallId: nul })).toBeUndefined();
    // A request for a run id no store could hold (e.g. `GET /runs/%00`) is "not found", not a 500.
    expect(await a.load(`x${nul}`)).toBeUndefined();
    expect(await a.events(`x${nul}`, 0, 10)).toEqual([]);
    expect(await a.lastEventSeq(`x${nul}`)).toBeUndefined();
    expect(await a.list({ workflow: nul })).toEqual([]);
    expect(await a.ownership.holder(`x${nul}`)).toBeUndefined();
    expect(await a.versions(`x${nul}`)).toEqual([]);
    // The run is unharmed: the refused save committed nothing.
    expect(await a.load(id)).toEqual(stored);
    await a.save(blob(id, { updatedAt: "2026-11-30T00:00:01.000Z" }));
  });

  it("stores a 12 MB blob and a 2 MB event whole", async () => {
    const a = await instance("A");
    const id = runId();
    const big = blob(id, { input: { text: "x🙂'\\".repeat(2_000_000) } });
    const ev = event(0, "y".repeat(2_000_000));
    await a.save(big, [], [], [ev]);
    expect(await a.load(id)).toEqual(big);
    expect(await a.events(id, 0, 1)).toEqual([ev]);
  }, 30_000);

  it("refuses a part the database cannot store and commits nothing of the save", async () => {
    const a = await instance("A");
    const id = runId();
    await expect(a.save(blob(id), [], [], [event(2 ** 40)])).rejects.toThrow(/out of range/);
    expect(await a.load(id)).toBeUndefined();
    expect(await a.ownership.holder(id)).toBeUndefined();
    expect(a.ownership.holds(id)).toBe(false);
    await a.save(blob(id));
    expect(a.ownership.holds(id)).toBe(true);
  });
});
