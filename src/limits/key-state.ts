/**
 * A key's state as the Keys page (src/dashboard/client/pages/keys.tsx) and `switchyard keys list`
 * (src/cli/keys-command.ts) show it: revoked, disabled, its budget used up, or active. A key whose
 * budget window is used up (its spend at or over the budget, as the guard counts it: src/limits/counters.ts
 * refuses at `used >= max`) is refused every request (429 `key_budget_exceeded`) until that window
 * resets; until 2026-12-06 its row still said a green "active" (tryout5), only its red bar said why, and
 * `keys list` said "active" until 2026-12-07. Imports nothing: part of the browser bundle.
 */
/** What the State column says of a key; `until` (ms since the epoch) is when a used-up budget's window resets. */
export type KeyState = { kind: "revoked"; at: number } | { kind: "disabled"; at: number } | { kind: "budget_used_up"; until: number; windows: string[] } | { kind: "active" };

/** The fields of a key (`GET /admin/api/keys`' `keys[]`) that {@link keyState} reads; times in ms since the epoch. */
export interface KeyStateInput {
  revokedAt?: number | null;
  disabledAt?: number | null;
  /** Current use of the key's limits (active keys with limits): each budget's amount, use (tokens or USD) and window end. */
  use?: { budgets?: ReadonlyArray<{ budget: { window: string; usd?: number; tokens?: number }; used: number; resetsAt?: number }> } | null;
}

/**
 * The key's state at `now` (ms since the epoch): revoked, else disabled, else its budget used up when one
 * or more of its budget windows is open (resets after `now`) with its use at or over its amount — refused
 * until the last of them resets (`until`; `windows`, their names: "1d") —, else active. O(budgets).
 */
export function keyState(k: KeyStateInput, now: number): KeyState {
  if (k.revokedAt !== undefined && k.revokedAt !== null) return { kind: "revoked", at: k.revokedAt };
  if (k.disabledAt !== undefined && k.disabledAt !== null) return { kind: "disabled", at: k.disabledAt };
  let until = 0;
  const windows: string[] = [];
  for (const b of k.use?.budgets ?? []) {
    const max = b.budget.usd ?? b.budget.tokens;
    if (max === undefined || b.resetsAt === undefined || b.resetsAt <= now || b.used < max) continue;
    until = Math.max(until, b.resetsAt);
    windows.push(b.budget.window);
  }
  return windows.length > 0 ? { kind: "budget_used_up", until, windows } : { kind: "active" };
}
