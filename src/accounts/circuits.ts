/**
 * Provider circuits (SPEC 6.3), the account registry's part for them: consecutive 5xx per provider,
 * the circuit each opens (10 in a row → open for 5 minutes, then half-open: one probe passes; its
 * success closes the circuit, its failure reopens it), written through to the store and re-read from it
 * (SPEC D-2), with the `account_state` changes they make (`circuit_open`, `circuit_half_open`,
 * `circuit_closed`, once per account of the provider) published through the registry.
 *
 * A re-read keeps a provider's circuit state (SPEC D-2 shares it; the store is the truth for open
 * circuits): a circuit open here that the read no longer brings was closed elsewhere (its request or its
 * half-open probe succeeded there) and is published as `circuit_closed` "closed elsewhere" (since
 * 2026-12-04); a stored circuit that is not open here was opened elsewhere and is published as
 * `circuit_open` "opened elsewhere" (since 2026-12-05: before, its requests were held back here without
 * an event, so a dashboard open here and the alerts did not show it). The store keeps no circuit past its
 * open period (both stores prune it at each read), so a half-open circuit held here is kept half-open by a
 * re-read until a probe decides (until 2026-12-05 the re-read, which every configuration reload brings,
 * closed it: a half-open circuit lasted at most 10 s while an open one survived the same re-read). What
 * the store cannot say, this instance then does not know: a half-open circuit another instance's probe
 * closed stays half-open here until a probe of this instance succeeds (one request at a time passes).
 * Only a change of the provider itself (its base URL or kind, a configuration re-read) resets its
 * circuit and its count ({@link ProviderCircuits.providerChanged}).
 *
 * "Consecutive 5xx" are counted per upstream reply, the gateway's own same-account retries included
 * (SPEC 6.3's row reads "10 consecutive 5xx from one provider" in a table of what the upstream says;
 * see README "Not done yet").
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
  /**
   * Writes through to the store; `key` names the row (`circuit␀PROVIDER`): a write the embedded store
   * refuses (a full disk) is written again later (src/accounts/retry-writes.ts), and {@link ProviderCircuits.load}
   * keeps the circuit as held here meanwhile. Never throws.
   */
  persist(write: (store: Store) => unknown, key?: string): void;
  /** Arms the registry's end timer for a state ending at `until` (ms since the epoch). */
  arm(until: number): void;
  /** Publishes a provider-wide change once per account of the provider (SPEC 9.4), when somebody listens. */
  publish(providerId: string, change: string, extra?: Omit<Partial<AccountStateEvent>, "type" | "account" | "change">): void;
  /** Whether somebody listens (the re-read compares only then). */
  listening(): boolean;
}

/** A circuit closed by hand, as it was: its state, the reason it opened, the end of its open period (ms since the epoch). */
export interface ClosedCircuit {
  state: "open" | "half-open";
  reason: string;
  openUntil: number;
}

interface Held {
  openUntil: number;
  probing: boolean;
  reason: string;
}

/** The provider circuits of one registry, keyed by provider id. */
export class ProviderCircuits {
  private open = new Map<string, Held>();
  private readonly serverErrors = new Map<string, number>();
  /** When a provider's base URL or kind last changed here, ms since the epoch (stored circuits opened before are stale). */
  private readonly changedAt = new Map<string, number>();
  /** Closes by hand on their way ({@link closeAround}), by provider id: how many. */
  private readonly closing = new Map<string, number>();
  /** Whether the first load (at start) happened: what it brings is no change. */
  private loaded = false;

  constructor(private readonly hooks: CircuitHooks) {}

  /**
   * Replaces the circuits with the store's (at start and each re-read), keeping what the store cannot
   * say, and publishing what changed elsewhere (see the module comment):
   * - a circuit held here whose open period ended (half-open) and that the read no longer brings is kept
   *   half-open (the store keeps no circuit past its open period), its probe free again;
   * - a circuit still open here that the read no longer brings closed elsewhere: `circuit_closed`
   *   "circuit (REASON) closed elsewhere";
   * - a stored circuit not open here (not held, or half-open here) opened elsewhere: `circuit_open`
   *   "circuit (REASON) opened elsewhere", with its end (not at the first load);
   * - a stored circuit opened before its provider changed here ({@link providerChanged}) is left out;
   * - a provider whose circuit write waits to be written again (`waiting`, src/accounts/retry-writes.ts:
   *   the store refused it), or whose close by hand is being written ({@link closeAround}), keeps its circuit
   *   as held here, open or closed, and nothing is published.
   * O(circuits).
   */
  load(circuits: readonly Circuit[], unwritten?: (providerId: string) => boolean): void {
    const waiting = this.closing.size > 0 ? (id: string) => this.closing.has(id) || unwritten?.(id) === true : unwritten;
    const held = this.open;
    const now = this.hooks.now();
    const listening = this.hooks.listening() && this.loaded;
    this.loaded = true;
    this.open = new Map();
    for (const c of circuits) {
      if (waiting?.(c.providerId)) continue;
      const changed = this.changedAt.get(c.providerId);
      if (changed !== undefined && c.since !== undefined && c.since <= changed) continue;
      const was = held.get(c.providerId);
      const reason = c.reason ?? was?.reason ?? "opened";
      this.open.set(c.providerId, { openUntil: c.openUntil, probing: false, reason });
      if (listening && c.openUntil > now && (!was || was.openUntil <= now)) {
        this.hooks.publish(c.providerId, "circuit_open", { reason: `circuit (${reason}) opened elsewhere`, until: c.openUntil });
      }
    }
    for (const [providerId, c] of held) {
      if (this.open.has(providerId)) continue;
      if (c.openUntil <= now || waiting?.(providerId)) {
        // Half-open here: kept until a probe decides. A probe whose request ended without a verdict (a 4xx,
        // the client gone) would hold the provider back for good: the re-read frees the probe again.
        this.open.set(providerId, { ...c, probing: false });
        continue;
      }
      if (listening) this.hooks.publish(providerId, "circuit_closed", { reason: `circuit (${c.reason}) closed elsewhere` });
    }
  }

  /**
   * The provider's base URL or kind changed (a configuration re-read): its circuit and its count of
   * consecutive 5xx belonged to the upstream it had before, so they are dropped here and in the store, and
   * a stored circuit opened before now is not taken back by a later re-read. Publishes `circuit_closed`
   * when a circuit was held.
   */
  providerChanged(providerId: string, what: string): void {
    const now = this.hooks.now();
    this.serverErrors.delete(providerId);
    this.changedAt.set(providerId, now);
    const c = this.open.get(providerId);
    if (!c) return;
    this.open.delete(providerId);
    this.hooks.persist((st) => st.clearCircuit(providerId), circuitRow(providerId));
    this.hooks.publish(providerId, "circuit_closed", { reason: `circuit (${c.reason}) closed: the provider's ${what} changed` });
  }

  /**
   * Closes the provider's circuit by hand (`switchyard accounts close-circuit PROVIDER`, newuser12a
   * G21): its requests go out from the next one on, the count of consecutive 5xx starts again, a stored
   * circuit opened before now is not taken back by a re-read (the caller clears the store's), and
   * `circuit_closed` "circuit (REASON) closed by hand" is published. The circuit as it was (open or
   * half-open), or undefined when none held.
   */
  close(providerId: string): ClosedCircuit | undefined {
    const now = this.hooks.now();
    const c = this.open.get(providerId);
    this.serverErrors.delete(providerId);
    this.changedAt.set(providerId, now);
    if (!c) return undefined;
    this.open.delete(providerId);
    this.hooks.publish(providerId, "circuit_closed", { reason: `circuit (${c.reason}) closed by hand` });
    return { state: c.openUntil > now ? "open" : "half-open", reason: c.reason, openUntil: c.openUntil };
  }

  /**
   * Closes the provider's circuit by hand once `write` (the store's delete of it) resolves: {@link close}
   * then, and its answer. While `write` runs a re-read keeps the circuit as held here ({@link load}), so
   * the close is announced as by hand, not "closed elsewhere". When `write` throws (the database refused
   * it) the circuit stays as it was, here as in the store, and the error is thrown. Until session 44 the
   * registry closed memory first: a refused write left it closed here and open in the database and on the
   * other instances (a re-read here did not take it back: {@link close} marks the provider changed).
   */
  async closeAround(providerId: string, write: () => Promise<void>): Promise<ClosedCircuit | undefined> {
    this.closing.set(providerId, (this.closing.get(providerId) ?? 0) + 1);
    try {
      await write();
    } finally {
      const n = (this.closing.get(providerId) ?? 1) - 1;
      if (n > 0) this.closing.set(providerId, n);
      else this.closing.delete(providerId);
    }
    return this.close(providerId);
  }

  /**
   * {@link providerChanged} for each provider of `was` whose base URL or kind differs in `next` (a
   * configuration re-read): the ids of those providers (empty when none).
   */
  providersChanged(was: ReadonlyMap<string, { baseUrl: string; kind: string }>, next: ReadonlyMap<string, { baseUrl: string; kind: string }>): Set<string> {
    const changed = new Set<string>();
    for (const [id, before] of was) {
      const now = next.get(id);
      if (!now) continue;
      if (now.baseUrl !== before.baseUrl) this.providerChanged(id, "base_url");
      else if (now.kind !== before.kind) this.providerChanged(id, "kind");
      else continue;
      changed.add(id);
    }
    return changed;
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
      this.hooks.persist((st) => st.setCircuit({ providerId, openUntil, reason: stored, since: now }), circuitRow(providerId));
      this.hooks.arm(openUntil);
      this.hooks.publish(providerId, "circuit_open", { reason: c ? "the half-open probe failed" : stored, until: openUntil });
    }
  }

  /** A request to the provider succeeded: the count restarts and an open or half-open circuit closes. */
  success(providerId: string): void {
    this.serverErrors.set(providerId, 0);
    if (this.open.delete(providerId)) this.closed(providerId);
  }

  /**
   * A success closed the provider's open circuit: stored and announced. A method of its own, so that the
   * write it hands the store (which holds the id) does not make every success allocate its scope
   * (JavaScriptCore makes a function's captured variables at its entry: docs/performance.md item 255).
   */
  private closed(providerId: string): void {
    this.hooks.persist((st) => st.clearCircuit(providerId), circuitRow(providerId));
    this.hooks.publish(providerId, "circuit_closed", { reason: "a request succeeded" });
  }

  /** Forgets counts and circuits in memory (tests, admin "reset"). */
  reset(): void {
    this.serverErrors.clear();
    this.open.clear();
  }
}

/** The row key of a provider's circuit for the writes kept to be written again (src/accounts/retry-writes.ts). */
export function circuitRow(providerId: string): string {
  return "circuit\u0000" + providerId;
}
