/**
 * A shared store's account-state writes at a stop (src/stop-gateway.ts with the registry's
 * `unwrittenStateWrites`, read after the store's close): a write still on its way is said as such, and
 * when its next try finds the store closed it is counted lost (`lostStateWrites`, which
 * `switchyard_store_dropped_total` reads): until session 44 a write the closed store refused was not
 * counted anywhere. A stand-in shared store whose lock write the test holds and rejects.
 */
import { expect, test } from "bun:test";
import { classify } from "../../pipeline/classify.ts";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { stopGateway } from "../../src/stop-gateway.ts";
import { StoreError, type Store } from "../../src/store/types.ts";
import { idleStopParts } from "../support/stop-parts.ts";
import { until } from "../support/until.ts";
import { account, providerOf } from "./helpers.ts";

test("a lock write on its way at the stop: the stop says it was still on its way; refused once the store closed, it is counted lost", async () => {
  let closed = false;
  let gate!: { reject: (e: unknown) => void };
  const tries: string[] = [];
  const store = {
    shared: true,
    setLock: () => {
      if (closed) {
        tries.push("closed");
        throw new StoreError("closed", "the store is closed");
      }
      tries.push("sent");
      return new Promise<void>((_, reject) => (gate = { reject }));
    },
    flush: async () => {},
    close: async () => void (closed = true),
    stats: () => ({ pendingUsage: 0 }),
  } as unknown as Store;
  const clock = { now: () => Date.now(), sleep: (ms: number) => Bun.sleep(ms) };
  const p = providerOf("p");
  const logs: string[] = [];
  const registry = new AccountRegistry(store, clock, { log: (l) => void logs.push(l) });
  registry.setAccounts([account("a1")], new Map([["p", p]]));
  registry.failure(registry.list()[0]!, p, "claude-x", classify({ status: 401, bodyText: JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } }), now: clock.now() }));
  expect(tries).toEqual(["sent"]);
  const lines: string[] = [];
  const parts = idleStopParts(lines, {
    store,
    retryStateWrites: (until) => registry.stateWritesSettled(until),
    unwrittenStateWrites: () => registry.unwrittenStateWrites(),
  });
  expect(await stopGateway(parts, 0, () => false)).toBe(false); // exit 1
  expect(lines.map((l) => JSON.parse(l))).toMatchObject([
    {
      level: "error",
      msg: "stopping while account state writes were still on their way: 0 usage rows, 0 route traces, 1 routing/budget state changes and the key-limit use of 0 windows were not written at the stop and are lost",
      state: 1,
    },
  ]);
  // the database answers the write in the air with a serialization failure: its next try finds the store closed
  gate.reject(Object.assign(new Error("could not serialize access due to concurrent update"), { errno: "40001" }));
  await until(() => tries.length === 2, 5_000, "the next try", 10);
  await until(() => registry.lostStateWrites === 1, 5_000, "the refused write to be counted lost", 10);
  expect(tries).toEqual(["sent", "closed"]);
  expect(registry.unwrittenStateWrites()).toEqual({ rejected: 0, droppedAtCap: 0, atStop: 1 });
  expect(logs.filter((l) => l.includes('"error"'))).toEqual([]); // no line of its own: the stop's says it
  registry.close();
});
