/**
 * Provider circuits (SPEC 6.3), the account registry's part for them: consecutive 5xx per provider,
 * the circuit each opens (10 in a row → open for 5 minutes, then half-open: one probe passes; its
 * success closes the circuit, its failure reopens it), written through to the store and re-read from it
 * (SPEC D-2), with the `account_state` changes they make (`circuit_open`, `circuit_half_open`,
 * `circuit_closed`, once per account of the provider) published through the registry.
 *
 * A re-read that no longer brings a circuit held here closes it here, and says so: the store keeps no
 * circuit once its open period ended (both stores prune it at each read), so a circuit another instance
 * closed (its request succeeded, its half-open probe too) and a half-open one whose end passed read the
 * same. Until 2026-12-04 that re-read dropped it without a word: a dashboard open on this instance kept
 * showing the circuit open (or half-open) and no `circuit_closed` alert was raised here, nor anywhere
 * once the re-read had come before the probe (the probe's success found no circuit left to close).
 */
import type { Circuit, Store } from "../store/types.ts";
import type { AccountStateEvent } from "../events/bus.ts";

/** SPEC 6.3: consecutive 5xx from one provider that open its circuit. */
export const CIRCUIT_THRESHOLD = 10;
/** SPEC 6.3: how long an opened provider circuit stays open before its half-open probe, ms (5 min). */
export const CIRCUIT_OPEN_MS = 5 * 60_000;

/** What the circuits need from the registry that holds them. */
export interface CircuitHooks {
  /** The registry's clock, ms since the epoch. */
  now(): number;
  /** Writes through to the store (failures ignored: memory holds the state, the next re-read reconciles). */
  persist(write: (store: Store) => unknown): void;
  /** Arms the registry's end timer for a state ending at `until` (ms since the epoch). */
  arm(until: number): void;
  /** Publishes a provider-wide change once per account of the provider (SPEC 9.4), when somebody listens. */
  publish(providerId: string, change: string, extra?: Omit<Partial<AccountStateEvent>, "type" | "account" | "change">): void;
  /** Whether somebody listens (the re-read compares only then). */
  listening(): boolean;
}

interface Held {
  openUntil: number;
  probing: boolean;
  reason: string;
}

/** The provider circuits of one registry, keyed by provider id. */
export class ProviderCircuits {
  private readonly open = new Map<string, Held>();
  private readonly serverErrors = new Map<string, number>();

  constructor(private readonly hooks: CircuitHooks) {}

  /**
   * Replaces the circuits with the store's (at start and each re-read), publishing `circuit_closed` for
   * each circuit held here that the read no longer brings (see the module comment): "circuit (REASON)
   * closed elsewhere" while it was still open here, "half-open circuit (REASON) closed: …" once its open
   * period had ended. O(circuits).
   */
  load(circuits: readonly Circuit[]): void {
    const held = this.hooks.listening() && this.open.size > 0 ? new Map(this.open) : undefined;
    this.open.clear();
    for (const c of circuits) this.open.set(c.providerId, { openUntil: c.openUntil, probing: false, reason: c.reason ?? held?.get(c.providerId)?.reason ?? "opened" });
    if (!held) return;
    const now = this.hooks.now();
    for (const [providerId, c] of held) {
      if (this.open.has(providerId)) continue;
      const reason =
        c.openUntil > now
          ? `circuit (${c.reason}) closed elsewhere`
          : `half-open circuit (${c.reason}) closed: the store keeps no circuit past its open period (another instance's probe may have closed it)`;
      this.hooks.publish(providerId, "circuit_closed", { reason });
    }
  }

  /** The open periods' ends, for the registry's end timer. */
  ends(): number[] {
    return [...this.open.values()].map((c) => c.openUntil);
  }

  /** Publishes `circuit_half_open` for each circuit whose open period ended in (from, now]; arms the timer for the others. */
  expire(from: number, now: number): void {
    for (const [providerId, c] of this.open) {
      if (c.openUntil > from && c.openUntil <= now) this.hooks.publish(providerId, "circuit_half_open", { reason: "the next request probes the provider" });
      else if (c.openUntil > now) this.hooks.arm(c.openUntil);
    }
  }

  /** A provider circuit's state without consuming the half-open probe (dry run, status). */
  state(providerId: string): { state: "closed" | "open" | "half-open"; openUntil?: number; consecutive5xx: number } {
    const c = this.open.get(providerId);
    const consecutive5xx = this.serverErrors.get(providerId) ?? 0;
    if (!c) return { state: "closed", consecutive5xx };
    return { state: c.openUntil > this.hooks.now() ? "open" : "half-open", openUntil: c.openUntil, consecutive5xx };
  }

  /** Whether requests to the provider are held back now; a half-open circuit lets exactly one probe through. */
  isOpen(providerId: string): boolean {
    const c = this.open.get(providerId);
    if (!c) return false;
    if (c.openUntil > this.hooks.now()) return true;
    if (c.probing) return true;
    c.probing = true;
    return false;
  }

  /** Counts a 5xx or transport failure; the 10th in a row, or a failed probe, opens the circuit for 5 minutes. */
  serverError(providerId: string, now: number): void {
    const n = (this.serverErrors.get(providerId) ?? 0) + 1;
    this.serverErrors.set(providerId, n);
    const c = this.open.get(providerId);
    if (n >= CIRCUIT_THRESHOLD || (c && c.probing)) {
      const openUntil = now + CIRCUIT_OPEN_MS;
      // The stored reason (and the one a later "closed elsewhere" names) is the threshold's, as before.
      const stored = `${CIRCUIT_THRESHOLD} consecutive 5xx`;
      this.open.set(providerId, { openUntil, probing: false, reason: stored });
      this.serverErrors.set(providerId, 0);
      this.hooks.persist((st) => st.setCircuit({ providerId, openUntil, reason: stored, since: now }));
      this.hooks.arm(openUntil);
      this.hooks.publish(providerId, "circuit_open", { reason: c ? "the half-open probe failed" : stored, until: openUntil });
    }
  }

  /** A request to the provider succeeded: the count restarts and an open or half-open circuit closes. */
  success(providerId: string): void {
    this.serverErrors.set(providerId, 0);
    if (!this.open.delete(providerId)) return;
    this.hooks.persist((st) => st.clearCircuit(providerId));
    this.hooks.publish(providerId, "circuit_closed", { reason: "a request succeeded" });
  }

  /** Forgets counts and circuits in memory (tests, admin "reset"). */
  reset(): void {
    this.serverErrors.clear();
    this.open.clear();
  }
}
