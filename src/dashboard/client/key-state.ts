/**
 * A key's State on the Keys page: revoked, disabled, its budget used up, or active. A key whose budget
 * window is used up (its spend at or over the budget, as the guard counts it: src/limits/counters.ts
 * refuses at `used >= max`) is refused every request (429 `key_budget_exceeded`) until that window
 * resets; until 2026-12-06 its row still said a green "active" (tryout5), only its red bar said why.
 */
import type { KeyInfo } from "./types.ts";

/** What the State column says of a key; `until` (ms since the epoch) is when a used-up budget's window resets. */
export type KeyState = { kind: "revoked"; at: number } | { kind: "disabled"; at: number } | { kind: "budget_used_up"; until: number; windows: string[] } | { kind: "active" };

/**
 * The key's state at `now` (ms since the epoch): revoked, else disabled, else its budget used up when one
 * or more of its budget windows is open (resets after `now`) with its use at or over its amount — refused
 * until the last of them resets (`until`; `windows`, their names: "1d") —, else active. O(budgets).
 */
export function keyState(k: KeyInfo, now: number): KeyState {
  if (k.revokedAt !== undefined) return { kind: "revoked", at: k.revokedAt };
  if (k.disabledAt !== undefined) return { kind: "disabled", at: k.disabledAt };
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
