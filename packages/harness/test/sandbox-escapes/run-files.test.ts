/**
 * Escape suite, files (issue 26 "Rules"): run A's Working tools — the file tools and bash, each a
 * real tool call of a real Harness Turn — try to read live run B's file by path, by symlink, by
 * hard link, by `..` and by `/proc/<pid>/root`. Each is refused, and the tool result the model
 * reads says why; run B's secret never reaches the model.
 */
import { link } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EscapeStack, noSandbox, startEscapeStack } from "./escape-harness.js";

describe.skipIf(noSandbox)("escapes from a run's files, through real Working-tool calls", () => {
  let s: EscapeStack;
  beforeAll(async () => {
    s = await startEscapeStack();
  });
  afterAll(async () => {
    await s?.close();
  });
  const never = (text: string) => expect(text).not.toContain(s.secretText);

  it("the run's own files still work: read, write, edit, ls, grep, find, bash", async () => {
    expect((await s.call("read", { path: "mine.txt" })).result).toContain("A-OWN");
    expect((await s.call("write", { path: "sub/new.txt", content: "hello sandbox\n" })).result).toMatch(
      /Successfully wrote/,
    );
    expect(
      (await s.call("edit", { path: "sub/new.txt", edits: [{ oldText: "hello", newText: "bye" }] })).result,
    ).toMatch(/Successfully replaced/);
    expect((await s.call("ls", { path: "." })).result).toContain("sub/");
    expect((await s.call("grep", { pattern: "bye", path: "." })).result).toContain("new.txt");
    expect((await s.call("find", { pattern: "*.txt" })).result).toContain("new.txt");
    const bash = (await s.call("bash", { command: "cat sub/new.txt; id -u" })).result;
    expect(bash).toContain("bye sandbox");
    // The sandbox never runs as root, even when the Harness (CI) does.
    expect(bash).not.toMatch(/^0$/m);
  });

  it("by path: the file tools refuse it, bash cannot see run B at all", async () => {
    const read = (await s.call("read", { path: s.secretB })).result;
    never(read);
    expect(read).toMatch(/outside|refused/i);
    const bash = (await s.call("bash", { command: `cat ${s.secretB}; ls ${s.base}` })).result;
    never(bash);
    expect(bash).toMatch(/No such file or directory/);
    // The parent shows run A alone: no other run's directory exists in the sandbox.
    expect(bash).toMatch(/^runA$/m);
    expect(bash).not.toMatch(/^runB$/m);
  });

  it("by symlink: bash may make the link, read refuses to follow it out of the run (JR2_ERR_SANDBOX_PATH_REFUSED)", async () => {
    await s.call("bash", { command: `ln -s ${s.secretB} link-b && ln -s ${s.runB} dir-b && echo linked` });
    const read = (await s.call("read", { path: "link-b" })).result;
    never(read);
    expect(read).toMatch(/refused/);
    const grep = (await s.call("grep", { pattern: "B-SECRET", path: "dir-b" })).result;
    never(grep);
    expect(grep).toMatch(/refused/);
    const ls = (await s.call("ls", { path: "dir-b" })).result;
    expect(ls).not.toContain("secret.txt");
    // write through a link to another run's file is refused too, and run B's file is unchanged.
    const write = (await s.call("write", { path: "link-b", content: "overwritten" })).result;
    expect(write).toMatch(/refused|link/i);
    const bash = (await s.call("bash", { command: "cat link-b; cat dir-b/secret.txt" })).result;
    never(bash);
    expect(bash).toMatch(/No such file or directory/);
  });

  it("by hard link: bash cannot make one (run B is absent), and one planted in the run is refused", async () => {
    const bash = (await s.call("bash", { command: `ln ${s.secretB} hard-b` })).result;
    expect(bash).toMatch(/No such file or directory|cannot/);
    await link(s.secretB, join(s.runA, "planted-b"));
    const read = (await s.call("read", { path: "planted-b" })).result;
    never(read);
    expect(read).toMatch(/refused/);
    expect(read).toMatch(/link/i);
  });

  it("by `..`: refused by the file tools, absent for bash", async () => {
    const read = (await s.call("read", { path: "../runB/secret.txt" })).result;
    never(read);
    expect(read).toMatch(/outside|refused/i);
    const bash = (await s.call("bash", { command: "cat ../runB/secret.txt" })).result;
    never(bash);
    expect(bash).toMatch(/No such file or directory/);
  });

  it("by /proc/<pid>/root: run B's process is not in run A's /proc, and read refuses the path", async () => {
    const pid = s.serviceB.process.pid!;
    const target = `/proc/${pid}/root${s.secretB}`;
    const bash = (await s.call("bash", { command: `cat ${target}; ls /proc | grep -c '^[0-9]'` })).result;
    never(bash);
    expect(bash).toMatch(/No such file or directory/);
    const read = (await s.call("read", { path: target })).result;
    never(read);
    expect(read).toMatch(/outside|refused/i);
  });
});
