/**
 * The end of a shutdown's grace period as the pipeline sees it (pipeline/grace-end.ts, SPEC D-3): an
 * upstream call still waiting for its reply is aborted when the period ends; one whose reply committed
 * (`unstop`) or that failed is no longer watched, and one sent after the end is aborted at once. The
 * calls are kept in a set, not as listeners on one shared signal (review21 R4).
 */
import { expect, test } from "bun:test";
import { executeCall, type Executor, type UpstreamCall } from "../../pipeline/execute.ts";
import { GraceEnd } from "../../pipeline/grace-end.ts";
import { account, providerOf } from "../accounts/helpers.ts";

const provider = providerOf("anthropic");
const call = () => ({ provider, account: account("a1"), model: "m", body: "{}", stream: false, clientHeaders: undefined as never, upstreamFormat: "anthropic-messages" as const, clientFormat: "anthropic-messages" as const });

/** An upstream that answers when told to, or fails when its call's signal aborts. */
function heldUpstream() {
  const answer = Promise.withResolvers<void>();
  const signals: AbortSignal[] = [];
  const executor: Executor = {
    async send(c: UpstreamCall) {
      signals.push(c.signal);
      if (c.signal.aborted) throw new Error("aborted"); // as fetch does with a signal aborted already
      await Promise.race([answer.promise, new Promise((_, reject) => c.signal.addEventListener("abort", () => reject(new Error("aborted"))))]);
      return { status: 200, headers: new Headers(), body: null } as never;
    },
  };
  return { executor, signals, answer: () => answer.resolve() };
}

test("a call waiting for its reply is aborted when the grace period ends; the 'gateway is shutting down' transport error", async () => {
  const grace = new GraceEnd();
  const up = heldUpstream();
  const sent = executeCall(up.executor, call(), new AbortController().signal, 60_000, grace);
  await Bun.sleep(0);
  expect((grace as unknown as { calls: Set<unknown> }).calls.size).toBe(1);
  grace.end();
  expect(up.signals[0]!.aborted).toBe(true);
  await expect(sent).rejects.toMatchObject({ reason: "aborted", message: "the gateway is shutting down" });
  expect((grace as unknown as { calls: Set<unknown> }).calls.size).toBe(0);
  expect(grace.over).toBe(true);
});

test("a call whose reply arrived and committed (unstop) is not aborted by the end; nothing stays watched", async () => {
  const grace = new GraceEnd();
  const up = heldUpstream();
  const pending = executeCall(up.executor, call(), new AbortController().signal, 60_000, grace);
  up.answer();
  const sent = await pending;
  sent.clientAbort.unstop();
  expect((grace as unknown as { calls: Set<unknown> }).calls.size).toBe(0);
  grace.end();
  expect(sent.controller.signal.aborted).toBe(false);
});

test("a call sent after the end is aborted at once, and the end adds no listener to the grace signal", async () => {
  const grace = new GraceEnd();
  grace.end();
  const up = heldUpstream();
  await expect(executeCall(up.executor, call(), new AbortController().signal, 60_000, grace)).rejects.toMatchObject({ reason: "aborted" });
  expect(up.signals[0]!.aborted).toBe(true);
  expect((grace as unknown as { calls: Set<unknown> }).calls.size).toBe(0);
});
