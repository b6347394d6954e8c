/**
 * The advisory locks a PostgreSQL check-and-insert of a name takes (combos and aliases:
 * routing-objects.ts `createIn`; client keys: keys.ts `createKey`), for the length of its transaction.
 *
 * A create takes the lock of the name as typed (`routing_name:Fast`, `client_key:ci-Bot`), which is the
 * only lock the builds before the folded lock took, and the lock of its folded form (`routing_name:fast`:
 * NFC and lower case, src/config/lookalike-names.ts `nameFold`; `client_key:ci-bot`: lower case), which
 * makes `Fast` and `fast` wait for each other. Taking both keeps an instance of the previous build and
 * an upgraded one excluding each other for the same name during a rolling upgrade (README "Upgrading":
 * old instances keep serving on the same database). The locks are taken one statement at a time in one
 * fixed order, by their lock number (`hashtext` of the label, ascending; one lock when the two labels
 * are equal or their numbers collide), so two creates that need the same two locks cannot each hold one
 * and wait for the other (the order of the labels could differ from the order of the numbers that are
 * the locks). An instance of the previous build takes one lock and cannot be part of such a wait.
 */
import type { SQL } from "bun";

/**
 * Takes the transaction-scoped advisory locks of `prefix + exact` and `prefix + folded` in ascending
 * order of their lock numbers. `tx`: the transaction the check and insert run in; the locks end with
 * it. One round trip more than a single lock (the numbers are read first).
 */
export async function lockName(tx: SQL, prefix: string, exact: string, folded: string): Promise<void> {
  if (exact === folded) {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${prefix + exact}))`;
    return;
  }
  const [row] = (await tx`SELECT hashtext(${prefix + exact}) AS a, hashtext(${prefix + folded}) AS b`) as Array<{ a: number; b: number }>;
  const ids = [...new Set([Number(row!.a), Number(row!.b)])].sort((x, y) => x - y);
  for (const id of ids) await tx`SELECT pg_advisory_xact_lock(${id}::bigint)`;
}
