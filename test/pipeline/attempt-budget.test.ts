/**
 * The attempt loop's budget rules (pipeline/attempt-budget.ts; SPEC 6.1 deadline and max_attempts, 6.2
 * same-account retries, 6.3 header timeout) with the default configuration: computed, not waited for.
 */
import { expect, test } from "bun:test";
import { headerWaitMs, leavesRoomForFallback, markBudgetReach, retryFitsBudget, type PlannedAttempt } from "../../pipeline/attempt-budget.ts";
import { parseConfig } from "../../src/config/load.ts";

const defaults = parseConfig("", { env: {} });

test("with the default header timeout and pre-commit deadline a first target that hangs leaves time for the next", () => {
  const headerTimeoutMs = defaults.providers.get("anthropic")!.headerTimeoutMs;
  const deadlineMs = defaults.settings.precommitDeadlineMs;
  // The two defaults are equal (SPEC 6.1 and 6.3 both say 60 s): the full header wait would spend the deadline.
  expect({ headerTimeoutMs, deadlineMs }).toEqual({ headerTimeoutMs: 60_000, deadlineMs: 60_000 });
  expect(leavesRoomForFallback(headerTimeoutMs, deadlineMs)).toBe(true);
  // The first attempt (at 0 ms) gives up after 30 s while another candidate remains; the next starts with 30 s left.
  const first = headerWaitMs(headerTimeoutMs, deadlineMs, 0, true);
  expect(first).toBe(30_000);
  expect(deadlineMs - first).toBe(30_000);
  // Every built-in provider has the same room.
  for (const [id, p] of defaults.providers) expect([id, leavesRoomForFallback(p.headerTimeoutMs, deadlineMs)]).toEqual([id, true]);
});

test("the last candidate keeps the provider's whole header timeout; a short header timeout is never lengthened", () => {
  expect(headerWaitMs(60_000, 60_000, 0, false)).toBe(60_000);
  expect(headerWaitMs(5_000, 60_000, 0, true)).toBe(5_000);
  expect(headerWaitMs(60_000, 60_000, 59_999, true)).toBe(1);
});

test("with the default 8 attempts, same-account retries leave one attempt for each untried candidate", () => {
  const max = defaults.settings.maxAttempts;
  expect(max).toBe(8);
  // Three single-account targets, the first two answering 503: 4 + 3 calls, then the third target.
  expect([1, 2, 3].map((attempts) => retryFitsBudget(max, attempts, 2))).toEqual([true, true, true]);
  expect([5, 6, 7].map((attempts) => retryFitsBudget(max, attempts, 1))).toEqual([true, true, false]);
});

test("dry run: the attempts after a non-streamed call that may outwait the pre-commit deadline are marked, not those past max_attempts again", () => {
  const anthropic = defaults.providers.get("anthropic")!;
  const quick = { ...anthropic, wholeReplyTimeoutMs: 20_000 }; // reply_timeout_ms below the deadline
  const codex = { ...anthropic, kind: "codex" as const }; // its calls always stream
  const plan = (): PlannedAttempt[] => ["a", "b", "c", "d"].map((accountId) => ({ target: "p/m", accountId }));
  const marks = (attempts: PlannedAttempt[]) => attempts.map((a) => [a.accountId, a.notReached !== undefined, a.notReachedIf?.slice(0, 38)]);
  const deadline = defaults.settings.precommitDeadlineMs;
  // Non-streamed with the defaults: a first call that never answers waits 600 000 ms; max_attempts 3 leaves d out anyway.
  const slow = plan();
  markBudgetReach(slow, [anthropic, anthropic, anthropic, anthropic], { maxAttempts: 3, precommitDeadlineMs: deadline, clientStream: false });
  expect(marks(slow)).toEqual([["a", false, undefined], ["b", false, "not reached if p/m @ a never answers: "], ["c", false, "not reached if p/m @ a never answers: "], ["d", true, undefined]]);
  // The first such call decides: a quick one and a codex one (always streamed) before it are not.
  const later = plan();
  markBudgetReach(later, [quick, codex, anthropic, anthropic], { maxAttempts: 8, precommitDeadlineMs: deadline, clientStream: false });
  expect(marks(later)).toEqual([["a", false, undefined], ["b", false, undefined], ["c", false, undefined], ["d", false, "not reached if p/m @ c never answers: "]]);
  // A streamed request: none.
  const streamed = plan();
  markBudgetReach(streamed, [anthropic, anthropic, anthropic, anthropic], { maxAttempts: 8, precommitDeadlineMs: deadline, clientStream: true });
  expect(streamed.every((a) => a.notReached === undefined && a.notReachedIf === undefined)).toBe(true);
});
