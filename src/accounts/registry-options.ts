/** The account registry's options (src/accounts/registry.ts). */
import type { EventBus } from "../events/bus.ts";
import type { AccountStrategy } from "./selection.ts";

/** Routing options of the registry (SPEC A-2…A-4); every field is optional. */
export interface RegistryOptions {
  /** `settings.account_strategy`, read per request; default `scored`. */
  strategy?: () => AccountStrategy;
  /** How long a request waits for a concurrency slot before moving on (SPEC A-4: 15 s), ms. */
  slotWaitMs?: number;
  /** How long a request waits for the shared store's answer to a lease (default `SHARED_ANSWER_MS`), ms. */
  sharedAnswerMs?: number;
  /** Uniform [0, 1) numbers for `random` and `p2c`; default Math.random. */
  rng?: () => number;
  /** Where account state changes are published (SPEC 9.4 live events): cooldowns, locks, quarantines, removed and restored pairings, provider
   * circuits. Events are built only while somebody listens; ends are found by one timer armed for the earliest known end. */
  bus?: EventBus;
  /**
   * This instance ended the account's lock or quarantine episode (by hand, a new login or import, the
   * account removed, its key changed in the file): the alerts claimed for it end with it, so the next lock
   * or quarantine is delivered (src/alerts/alert-claim.ts `endAlertEpisode`; newuser15 N11). Awaited
   * before the lock is cleared by hand or a login's work begins; never throws.
   */
  episodeEnded?: (accountId: string) => Promise<void>;
  /**
   * Receives the `error` line of each lock, cooldown, removal, circuit or quota-clear write a shared store's database
   * rejected (shared-state-writes.ts `rejectedStateWriteLine`); default stderr.
   */
  log?: (line: string) => void;
}
