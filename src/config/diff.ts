/**
 * What changed between two configurations (SPEC 9.3 `POST /admin/api/config/reload` answers it): per
 * section the ids added, removed and changed — never values, so no secret can appear — and for
 * `settings` and `server` the keys whose values differ (in the file's snake_case spelling).
 */
import type { ConfigChanges, SectionChanges } from "./describe-changes.ts";
import type { RuntimeConfig } from "./types.ts";

export type { ConfigChanges, SectionChanges };

/** JSON for comparison: Maps and Sets as entries, stable enough for equality of loader output. */
const stable = (x: unknown) => JSON.stringify(x, (_k, v) => (v instanceof Map ? [...v.entries()] : v instanceof Set ? [...v] : v));

function section<T>(prev: Iterable<[string, T]>, next: Iterable<[string, T]>, same?: (a: T, b: T) => boolean): SectionChanges | undefined {
  const a = new Map(prev);
  const b = new Map(next);
  const out: SectionChanges = { added: [], removed: [], changed: [] };
  for (const [id, v] of b) {
    if (!a.has(id)) out.added.push(id);
    else if (stable(a.get(id)) !== stable(v) && !same?.(a.get(id)!, v)) out.changed.push(id);
  }
  for (const id of a.keys()) if (!b.has(id)) out.removed.push(id);
  return out.added.length + out.removed.length + out.changed.length > 0 ? out : undefined;
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function keysChanged(prev: object, next: object): string[] | undefined {
  const a = prev as Record<string, unknown>;
  const b = next as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => stable(a[k]) !== stable(b[k]));
  return keys.length > 0 ? keys.map(snake).sort() : undefined;
}

type Account = RuntimeConfig["accounts"][number];

/**
 * Whether two versions of an account differ only in a priority that both took from the account's place
 * in the file (`priority` not written: its position, 1-based) while its place among its provider's
 * accounts (the order selection offers them in: priority, then file order) stayed: an account above it
 * removed or added moves the number, not the account (newuser13's tryout, J11: a reload that removed
 * the first account said "accounts anthc-1, gem-1 changed" of two untouched accounts). Such an account
 * is not reported as changed; a move among its provider's accounts still is.
 */
function onlyPositionMoved(prev: Account[], next: Account[]): (a: Account, b: Account) => boolean {
  const ids = new Set(next.map((x) => x.id).filter((id) => prev.some((x) => x.id === id)));
  const orderOf = (list: Account[], providerId: string) =>
    list
      .map((x, i) => ({ x, i }))
      .filter(({ x }) => x.providerId === providerId && ids.has(x.id))
      .sort((m, n) => m.x.priority - n.x.priority || m.i - n.i)
      .map(({ x }) => x.id)
      .join("\n");
  const derived = (list: Account[], acc: Account) => acc.priority === list.indexOf(acc) + 1;
  return (a, b) =>
    stable({ ...a, priority: 0 }) === stable({ ...b, priority: 0 }) &&
    derived(prev, a) &&
    derived(next, b) &&
    orderOf(prev, a.providerId) === orderOf(next, b.providerId);
}

/** What differs from `prev` to `next`. */
export function configChanges(prev: RuntimeConfig, next: RuntimeConfig): ConfigChanges {
  const out: ConfigChanges = {};
  const put = <K extends keyof ConfigChanges>(k: K, v: ConfigChanges[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  put("providers", section(prev.providers, next.providers));
  put("accounts", section(prev.accounts.map((a) => [a.id, a]), next.accounts.map((a) => [a.id, a]), onlyPositionMoved(prev.accounts, next.accounts)));
  put("combos", section(prev.combos, next.combos));
  put("aliases", section(prev.aliases, next.aliases));
  put("keys", section(prev.keys.map((k) => [k.name, k]), next.keys.map((k) => [k.name, k])));
  put("settings", keysChanged(prev.settings, next.settings));
  put("server", keysChanged(prev.server, next.server));
  return out;
}
