/**
 * The account registry's list (SPEC A-1, 2.3): the config file's accounts (with the models discovery
 * stored for them, and disabled when flagged through the admin API) followed by the accounts stored by
 * `login` / `import` that the file does not name, with the provider table in force.
 *
 * The store's part is kept as last read, so a new configuration's accounts are in force together with
 * the configuration itself ({@link AccountList.compose}, synchronous), before the store is read again
 * ({@link AccountList.refresh}): on PostgreSQL that re-read is a few round trips, during which a
 * reload that added a provider with its account answered its requests "No account is configured"
 * (test/e2e/reload-shared-store.test.ts).
 */
import type { Account } from "../../pipeline/ports.ts";
import type { RuntimeConfig } from "../config/types.ts";
import type { Store } from "../store/types.ts";
import type { AccountRegistry } from "./registry.ts";

/** Keeps the registry's accounts in step with the configuration in force and the store. */
export class AccountList {
  /** The store's part of the list, as last read: stored accounts, admin-API flags, discovered models by account. */
  private stored: Account[] = [];
  private flagged = new Set<string>();
  private discovered = new Map<string, string[]>();

  constructor(
    private readonly store: Store,
    private readonly registry: AccountRegistry,
    private readonly config: () => RuntimeConfig,
  ) {}

  /** Sets the registry's accounts from the configuration in force and the store as last read; no I/O. */
  compose(): void {
    const cfg = this.config();
    const ids = new Set(cfg.accounts.map((a) => a.id));
    const fromConfig = cfg.accounts.map((a) => {
      let out = a.models === undefined && this.discovered.has(a.id) ? { ...a, models: this.discovered.get(a.id) } : a;
      if (this.flagged.has(a.id) && !out.disabled) out = { ...out, disabled: true };
      return out;
    });
    this.registry.setAccounts([...fromConfig, ...this.stored.filter((a) => !ids.has(a.id))], cfg.providers);
  }

  /** The refresh last asked for (settled or not): the next one starts after it. */
  private last: Promise<void> = Promise.resolve();

  /**
   * Re-reads the store (stored accounts, account state, flags), then composes the list and loads the
   * state. Refreshes run one at a time, in the order they were asked for: two that overlapped (an
   * announcement heard while the re-read of the one before was under way, as when another instance adds
   * an account and stores its discovered models a moment later) could land in the other order, the older
   * read last, and the registry kept the older list until the next announcement (test/e2e/multi-instance
   * waited for discovered models that never came). @throws StoreError when the store cannot be read
   * (`unavailable`, `closed`).
   */
  refresh(): Promise<void> {
    const next = this.last.then(
      () => this.read(),
      () => this.read(),
    );
    this.last = next;
    return next;
  }

  private async read(): Promise<void> {
    // Account-state writes the store refused (a full disk: locks, cooldowns, removed pairings, circuits) first: the rows read below then have them.
    this.registry.retryWrites();
    const stored = await this.store.listAccounts();
    const state = await this.store.loadAccountState();
    // SPEC 9.3: config-file accounts disabled through the admin API (kept across restarts).
    const flagged = new Set(await this.store.listDisabledAccounts());
    // SPEC P-6: config accounts carry the models discovery stored for them (stored accounts already do).
    this.discovered = new Map(state.discoveredModels.map((d) => [d.accountId, d.models]));
    this.stored = stored;
    this.flagged = flagged;
    this.compose();
    this.registry.loadState(state);
  }
}
