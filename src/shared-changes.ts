/**
 * Following another instance's changes (SPEC D-2): a store shared by several instances announces each
 * change (PostgreSQL LISTEN/NOTIFY, within about a second); this instance re-reads what changed.
 * Coalesced: one re-read per burst of announcements (20 ms); an announcement of account changes re-reads
 * the account list, the stored combos, aliases and settings and the credential overrides too, one of
 * state alone re-reads the accounts' state. Keys another instance created or revoked are the store's
 * key cache; open Keys pages are told (`keys_changed`, SPEC 9.4).
 */
import type { AccountRegistry } from "./accounts/registry.ts";
import type { CredentialManager } from "./accounts/credentials.ts";
import type { LiveConfig } from "./config/live.ts";
import type { EventBus } from "./events/bus.ts";
import type { Store } from "./store/types.ts";
import type { Clock } from "../pipeline/ports.ts";

/** What {@link followSharedChanges} re-reads and where it publishes. */
export interface SharedChangeDeps {
  store: Store;
  bus: EventBus;
  clock: Clock;
  live: LiveConfig;
  registry: AccountRegistry;
  credentials: CredentialManager;
  /** Re-reads the account list (and with it the accounts' state). */
  refreshAccounts: () => Promise<unknown>;
}

/**
 * Subscribes to the store's announcements (see the module comment). A re-read that fails (the database
 * went away again) is left to the next announcement or the periodic re-read. Returns the stop: it
 * unsubscribes and drops a re-read not yet started.
 */
export function followSharedChanges(d: SharedChangeDeps): () => void {
  const { store, bus, clock } = d;
  let changeTimer: ReturnType<typeof setTimeout> | undefined;
  let accountsChanged = false;
  const unsubscribe = store.onChange((change) => {
    // Keys another instance created or revoked: the key cache is the store's; open Keys pages re-read (SPEC 9.4).
    if ((change === "keys" || change === "all") && bus.wants("keys_changed")) bus.publish({ type: "keys_changed", at: clock.now(), change: "changed" });
    if (change === "keys" || change === "leases") return; // lease waiters poll
    if (change !== "state") accountsChanged = true;
    if (changeTimer) return;
    changeTimer = setTimeout(async () => {
      changeTimer = undefined;
      const all = accountsChanged;
      accountsChanged = false;
      try {
        if (all) {
          // Combos, aliases and settings another instance stored through its admin API are announced
          // with its account changes: they apply here as soon as the accounts do, not at the 10 s re-read.
          await d.live.refreshStored().catch(() => {});
          await d.refreshAccounts();
          d.credentials.loadOverrides(await store.listCredentialOverrides());
        } else d.registry.loadState(await store.loadAccountState());
      } catch {
        // the database went away again: the next announcement or the periodic re-read catches up
      }
    }, 20);
  });
  return () => {
    unsubscribe();
    if (changeTimer) clearTimeout(changeTimer);
  };
}
