/**
 * The account list's re-reads of the store run one at a time, in the order asked: two that overlapped
 * (an announcement heard while the re-read before it was under way: another instance adds an account,
 * then stores its discovered models a moment later) could land in the other order, the older read last,
 * and the registry kept the older list until the next announcement.
 */
import { expect, test } from "bun:test";
import type { Account } from "../../pipeline/ports.ts";
import { AccountList } from "../../src/accounts/account-list.ts";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import type { RuntimeConfig } from "../../src/config/types.ts";
import type { AccountState, Store } from "../../src/store/types.ts";
import { account, providerOf, settableClock } from "./helpers.ts";

const EMPTY: AccountState = { cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] };

test("a re-read asked for later lands later: the newer list stays, whatever order the store answers in", async () => {
  // The stored accounts as the database holds them; the first read is slow (a loaded database).
  let stored: Account[] = [account("cc-team")];
  let release!: () => void;
  const slow = new Promise<void>((r) => (release = r));
  let reads = 0;
  const store = {
    listAccounts: async () => {
      const seen = stored; // what the database held when the read began
      if (reads++ === 0) await slow;
      return seen;
    },
    loadAccountState: async () => EMPTY,
    listDisabledAccounts: async () => [],
  } as unknown as Store;
  const registry = new AccountRegistry(undefined, settableClock());
  const list = new AccountList(store, registry, () => ({ accounts: [], providers: new Map([["p", providerOf("p")]]) }) as unknown as RuntimeConfig);

  const first = list.refresh(); // the account added
  stored = [account("cc-team", "p", { models: ["claude-x"] })]; // its discovered models stored a moment later
  const second = list.refresh();
  await Bun.sleep(5);
  release();
  await Promise.all([first, second]);
  expect(registry.list().map((a) => [a.id, a.models])).toEqual([["cc-team", ["claude-x"]]]);
});

test("a re-read that fails does not hold back the next one", async () => {
  let fail = true;
  const store = {
    listAccounts: async () => {
      if (fail) throw new Error("the database cannot be reached");
      return [account("a1")];
    },
    loadAccountState: async () => EMPTY,
    listDisabledAccounts: async () => [],
  } as unknown as Store;
  const registry = new AccountRegistry(undefined, settableClock());
  const list = new AccountList(store, registry, () => ({ accounts: [], providers: new Map([["p", providerOf("p")]]) }) as unknown as RuntimeConfig);
  await expect(list.refresh()).rejects.toThrow("the database cannot be reached");
  fail = false;
  await list.refresh();
  expect(registry.list().map((a) => a.id)).toEqual(["a1"]);
});
