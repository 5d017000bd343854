/**
 * What the crash harness keeps of each violating trial (issue 24 item 7): a violation nobody can
 * classify (trial 28's "2 conversations of obedient opened without the conversation-new notice")
 * is worth nothing without its logs. For each such trial, the Orchestrator's and the Harness's
 * output written during that trial, the model requests it caused, and its violations go to
 * `<dir>/trial-<n>.*`; `dir` is `JR2_CRASH_LOGS` or a fresh temp dir, printed with the report.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where each part of the stack's output stood when a trial began. */
export interface TrialMark {
  orchestrator: number;
  harness: number;
  requests: number;
}

/** The sources a trial's logs are cut from. */
export interface TrialSources {
  orchestratorLog(): string;
  harnessLog(): string;
  requests(): Promise<unknown[]>;
}

/** The trial logs of one harness run: `mark()` before a trial, `keep()` after a violating one. */
export function trialLogs(sources: TrialSources, dir = process.env.JR2_CRASH_LOGS) {
  const where = dir ?? mkdtempSync(join(tmpdir(), "jr2-crash-logs-"));
  mkdirSync(where, { recursive: true });
  return {
    dir: where,
    async mark(): Promise<TrialMark> {
      return {
        orchestrator: sources.orchestratorLog().length,
        harness: sources.harnessLog().length,
        requests: (await sources.requests()).length,
      };
    },
    /** Writes the trial's slice of every log; returns the files' common prefix. */
    async keep(n: number, since: TrialMark, violations: readonly string[]): Promise<string> {
      const prefix = join(where, `trial-${n}`);
      writeFileSync(`${prefix}.violations.txt`, `${violations.join("\n")}\n`);
      writeFileSync(`${prefix}.orchestrator.log`, sources.orchestratorLog().slice(since.orchestrator));
      writeFileSync(`${prefix}.harness.log`, sources.harnessLog().slice(since.harness));
      const requests = (await sources.requests()).slice(since.requests);
      writeFileSync(`${prefix}.model-requests.json`, `${JSON.stringify(requests, null, 1)}\n`);
      return prefix;
    },
  };
}
