/**
 * The conformance matrix (docs/conformance.md): every CLI e2e scenario reports its outcome here, and
 * `scripts/conformance` turns the records of one run of `test/e2e/cli` into the table.
 *
 * A record is one JSON line appended to the file named by `SWITCHYARD_CONFORMANCE_OUT` (nothing is
 * written when it is unset, as in a plain `bun test`): the CLI and its pinned version, the lane (the
 * provider format behind the gateway), the scenario, and pass or fail.
 */
import { appendFileSync } from "node:fs";
import type { CliSpec } from "./cli-install.ts";

/** What one CLI test shows (every CLI run streams; "streamed" is part of each scenario). */
export type Scenario = "plain answer" | "tool round trip" | "error after commit";

/** One line of the records file. */
export interface ConformanceRecord {
  cli: string;
  version: string;
  /** e.g. "anthropic (native)", "openai-compatible", "anthropic-compatible over WebSocket". */
  lane: string;
  scenario: Scenario;
  outcome: "pass" | "fail";
}

/**
 * Wraps a test body: runs it, records `pass` when it returns and `fail` when it throws (and rethrows),
 * so the matrix shows exactly what the assertions decided.
 */
export function conformance(cli: CliSpec, lane: string, scenario: Scenario, body: () => Promise<void>): () => Promise<void> {
  return async () => {
    const out = process.env.SWITCHYARD_CONFORMANCE_OUT;
    const record = (outcome: ConformanceRecord["outcome"]) => {
      if (!out) return;
      const r: ConformanceRecord = { cli: cli.name, version: cli.version, lane, scenario, outcome };
      appendFileSync(out, JSON.stringify(r) + "\n");
    };
    try {
      await body();
    } catch (e) {
      record("fail");
      throw e;
    }
    record("pass");
  };
}
