/**
 * Sibling models (SPEC R-10): when an upstream says a model does not exist, up to 3 siblings are tried
 * on the same provider before the next combo target. The siblings of a model are the provider's
 * configured `providers[].models.<id>.siblings` first, then this built-in table, which knows the
 * naming schemes of three families:
 *
 * - Claude (`claude-<tier>-<major>[-<minor>][-<YYYYMMDD>]`, e.g. `claude-sonnet-4-5-20250929`): the
 *   undated alias of a dated id, then the next minor version, then the previous one
 *   (`claude-opus-4-1` → `claude-opus-4-2`, `claude-opus-4`); the older scheme
 *   (`claude-3-5-sonnet-20241022`) → its `-latest` alias.
 * - GPT-5 and later (`gpt-<major>[.<minor>][-<variant>…][-<YYYY-MM-DD>]`, e.g. `gpt-5.1-codex-max`):
 *   the undated id, then the next and the previous minor version with the same variant
 *   (`gpt-5.1-codex` → `gpt-5.2-codex`, `gpt-5-codex`).
 * - Gemini (`gemini-<version>-<tier>[-preview…|-exp…|-NNN]`): the stable id of a preview, experimental
 *   or numbered one, else its `-preview`; then the tier's `-latest` alias (`gemini-flash-latest`).
 *
 * Pure functions; the attempt loop (pipeline/attempt-loop.ts) inserts the siblings as targets, and the
 * dry run (pipeline/order.ts planRoute) shows them where a real request would try them.
 */
import type { Target } from "./resolve.ts";

/** SPEC R-10: at most this many siblings are tried for one missing model. */
export const MAX_SIBLINGS = 3;

/**
 * The siblings of `model`, in the order they are tried: `configured` first (the provider's
 * `models.<id>.siblings`), then the built-in table; without `model` itself, without repeats, at most
 * {@link MAX_SIBLINGS}. Empty for a model of no known family without configured siblings.
 */
export function siblingsOf(model: string, configured: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const m of [...configured, ...builtinSiblings(model)]) {
    if (out.length >= MAX_SIBLINGS) break;
    if (m && m !== model && !out.includes(m)) out.push(m);
  }
  return out;
}

/**
 * The targets a missing model's siblings are tried as (SPEC R-10): `target` with each sibling of its
 * model ({@link siblingsOf}, the provider's configured ones first) as the model, on the same provider
 * (and the same pinned account), marked `siblingOf` the missing model. Empty for a model without siblings.
 */
export function siblingTargets(target: Target): Target[] {
  return siblingsOf(target.model, target.provider.models[target.model]?.siblings).map((model): Target => ({ ...target, model, label: `${target.provider.id}/${model}`, siblingOf: target.model }));
}

/** The built-in table's siblings of a model (see the module comment), possibly more than 3. */
export function builtinSiblings(model: string): string[] {
  return claude(model) ?? gpt(model) ?? gemini(model) ?? [];
}

function claude(model: string): string[] | undefined {
  const m = /^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-(\d{8}))?$/.exec(model);
  if (m) {
    const [, tier, major, minorText, date] = m;
    const minor = minorText === undefined ? 0 : Number(minorText);
    const id = (n: number) => (n === 0 ? `claude-${tier}-${major}` : `claude-${tier}-${major}-${n}`);
    const out: string[] = [];
    if (date) out.push(id(minor));
    out.push(id(minor + 1));
    if (minor > 0) out.push(id(minor - 1));
    return out;
  }
  const old = /^(claude-\d+(?:-\d+)?-(?:opus|sonnet|haiku))-\d{8}$/.exec(model);
  if (old) return [`${old[1]}-latest`];
  return undefined;
}

function gpt(model: string): string[] | undefined {
  const m = /^gpt-(\d+)(?:\.(\d+))?((?:-[a-z][a-z0-9]*)*?)(?:-(\d{4}-\d{2}-\d{2}))?$/.exec(model);
  if (!m || Number(m[1]) < 5) return undefined;
  const [, major, minorText, variant = "", date] = m;
  const minor = minorText === undefined ? 0 : Number(minorText);
  const id = (n: number) => `gpt-${major}${n === 0 ? "" : `.${n}`}${variant}`;
  const out: string[] = [];
  if (date) out.push(id(minor));
  out.push(id(minor + 1));
  if (minor > 0) out.push(id(minor - 1));
  return out;
}

function gemini(model: string): string[] | undefined {
  const m = /^gemini-(\d+(?:\.\d+)?)-(pro|flash-lite|flash)(-preview(?:-[\w.-]+)?|-exp(?:-[\w.-]+)?|-\d{3})?$/.exec(model);
  if (!m) return undefined;
  const [, version, tier, suffix] = m;
  const stable = `gemini-${version}-${tier}`;
  return [suffix ? stable : `${stable}-preview`, `gemini-${tier}-latest`];
}
