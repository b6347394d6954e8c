/**
 * Two notes of a key's row on the Keys page (SPEC 9.4, 9.6), from what `GET /admin/api/keys` lists:
 * when the key was last rotated, with until when its old secret still works (try18 D16: a Rotate whose
 * answer a reload lost left the key rotated with nothing on the page saying so), and, under a USD
 * budget's bar, how many of the key's requests in the window used a model without a price, whose part
 * the budget could not count (try18 D17: only a log line said so).
 */
import { clock, count } from "../format.ts";
import type { KeyInfo } from "../types.ts";

/**
 * "rotated 11:16 PM" (local time, as "disabled 11:00 PM" reads; a date before it when not today) and,
 * while the old secret is still accepted, "old secret works until 11:26 PM"; nothing for a key never
 * rotated (or rotated before rotation times were kept). `now`: the page's clock (ms), so the grace
 * line goes when the grace ends.
 */
export function KeyRotationNote({ k, now }: { k: KeyInfo; now: number }) {
  if (k.rotatedAt === undefined) return null;
  const grace = k.revokedAt === undefined && k.previousUntil !== undefined && k.previousUntil > now ? k.previousUntil : undefined;
  return (
    <div class="key-rotated muted small" title="When the key was last given a new secret (Rotate, switchyard keys rotate)">
      rotated <span class="nowrap">{clock(k.rotatedAt)}</span>
      {grace !== undefined ? (
        <div class="key-grace">
          old secret works until <span class="nowrap">{clock(grace)}</span>
        </div>
      ) : null}
    </div>
  );
}

/**
 * "7 requests used models without a price: only their priced part is counted (settings.pricing gives
 * one)" under a key's budget bars, for each USD budget whose window holds requests that used a model
 * without a price (the one that served them, or a failed attempt's; the window's name first when the
 * key has more than one USD budget); nothing when there are none. A partly unpriced request's priced
 * part (a failed attempt at a priced model) is counted: until 2026-12-08 the note read "7 requests of
 * unpriced models not counted", which said it was not.
 */
export function UnpricedBudgetNote({ k }: { k: KeyInfo }) {
  const usd = (k.use?.budgets ?? []).filter((b) => b.budget.usd !== undefined);
  const noted = usd.filter((b) => (b.unpriced ?? 0) > 0);
  if (noted.length === 0) return null;
  return (
    <>
      {noted.map((b) => (
        <div key={b.budget.window} class="key-unpriced small" data-unpriced={b.unpriced}>
          {usd.length > 1 ? `${b.budget.window}: ` : ""}
          {b.unpriced === 1 ? "1 request used a model without a price: only its" : `${count(b.unpriced!)} requests used models without a price: only their`} priced part is counted{" "}
          <span class="muted">
            (<code>settings.pricing</code> gives one)
          </span>
        </div>
      ))}
    </>
  );
}
