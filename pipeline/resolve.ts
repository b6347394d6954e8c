/**
 * resolve (SPEC R-2): the model name a client sent → the candidate targets.
 *
 * Order: a name with `/` is `provider/model` (prefix before the FIRST slash; no combo lookup);
 * otherwise an alias, then a combo, then a guess ({@link guessProvider}): the one provider whose
 * accounts advertise that exact model when there is exactly one, else from the name (`claude-` →
 * anthropic, or claude-code when anthropic has no account and claude-code has one; `gemini-` → gemini;
 * `gpt-`/`o1`/`o3`/`o4`/`codex-` and anything unknown → openai, or codex when openai has no account and
 * codex has one). Combos may reference combos; they are expanded depth-first in written order (cycles
 * are rejected when the config loads).
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { JoinedText } from "./joined-text.ts";
import type { ProviderInfo } from "./ports.ts";
import type { TargetPredicate } from "./predicates.ts";

/** One target of a combo as configured. */
export interface TargetSpec {
  /** `provider/model`, an alias, or a combo name. */
  model: string;
  account?: string;
  weight?: number;
  params?: Record<string, unknown>;
  when?: TargetPredicate;
}

/** Account-selection strategies of a combo (SPEC 5.1). */
export type ComboStrategy = "fallback" | "round-robin" | "weighted" | "least-used";

/** A combo as configured (SPEC 5.1). */
export interface ComboSpec {
  name: string;
  strategy: ComboStrategy;
  portability: "strip_with_warning" | "reject";
  cacheAffinity: boolean;
  targets: TargetSpec[];
}

/** What the guess of SPEC R-2 reads about accounts (the account registry answers). */
export interface AccountFacts {
  /** Whether the provider has any account (a `*-compatible` provider always has its keyless one). */
  hasAccounts(providerId: string): boolean;
  /**
   * Ids of the providers with at least one account that advertise exactly this model: an account's
   * discovered models (SPEC P-6), or the provider's configured `models`.
   */
  advertising(model: string): string[];
}

/** What resolution reads from the configuration. */
export interface RoutingTable {
  providers: Map<string, ProviderInfo>;
  aliases: Map<string, string>;
  combos: Map<string, ComboSpec>;
  /** Account facts for the guess; without them the guess goes by the name alone. */
  accounts?: AccountFacts;
  /**
   * The config's near-name search (src/unknown-keys.ts `suggest`, the one check-config's "did you mean"
   * uses): the closest candidate when `word` is plausibly a typo of it, else undefined. Without it a
   * mistyped name gets no guess ({@link nearAliasOrCombo}).
   */
  suggest?: (word: string, candidates: readonly string[]) => string | undefined;
  /**
   * Stored combos and aliases (created through the admin API or the dashboard) that the running
   * configuration leaves out because a file edit broke them (src/config/compose.ts `rejected`, `why:
   * "invalid"`): name → `{kind, why}`, `why` the loader's issues in one sentence. A request for such a
   * name is refused naming it and why ({@link resolveModel}), not guessed as a model of that name.
   */
  outOfForce?: ReadonlyMap<string, { kind: "combo" | "alias"; why: string }>;
}

/** A concrete candidate: one upstream model of one provider, optionally pinned to an account. */
export interface Target {
  provider: ProviderInfo;
  /** Upstream model id. */
  model: string;
  accountId?: string;
  weight?: number;
  params?: Record<string, unknown>;
  when?: TargetPredicate;
  /** `provider/model` for traces. */
  label: string;
  /** The combo that contributed this target (innermost), if any. */
  combo?: string;
  /** SPEC R-10: set on a sibling tried because the upstream said this model (the target's original) does not exist. */
  siblingOf?: string;
}

/** The outcome of resolution. */
export interface Resolution {
  targets: Target[];
  /** The outermost combo addressed, if any. */
  combo?: ComboSpec;
  /** The alias that was followed, if any. */
  alias?: string;
  /** How the name was understood, for the trace. */
  via: "provider-prefix" | "alias" | "combo" | "guess";
}

/**
 * Guesses the provider of a bare model name that is no alias and no combo (SPEC R-2), returning its id:
 * 1. the one provider whose accounts advertise exactly this model, when there is exactly one;
 * 2. else by name: `claude-` → `anthropic`, or the claude-code provider when `anthropic` has no account
 *    and a claude-code provider has one (what Claude Code sends when the user chose no model);
 *    `gemini-` → `gemini`; anything else (`gpt-`, `o1`, `o3`, `o4`, `codex-`, unknown) → `openai`, or
 *    the codex provider when `openai` has no account and a codex provider has one. Without account
 *    facts, the name rule's first choice. The built-in `cc` / `cx` win over other providers of their
 *    kind; among configured ones, the first in the table.
 */
export function guessProvider(model: string, table?: Pick<RoutingTable, "providers" | "accounts">): string {
  const facts = table?.accounts;
  if (facts) {
    const advertising = facts.advertising(model);
    if (advertising.length === 1) return advertising[0];
  }
  const byName = model.startsWith("claude-") ? "anthropic" : model.startsWith("gemini-") ? "gemini" : "openai";
  if (!facts || !table || byName === "gemini" || facts.hasAccounts(byName)) return byName;
  return subscriptionProvider(byName, table, facts);
}

/**
 * {@link guessProvider}'s subscription provider for a family whose API provider has no account: a
 * function of its own, so that its filter (which holds `kind` and `facts`) does not make every guess
 * allocate their scope (JavaScriptCore makes a function's captured variables at its entry:
 * docs/performance.md item 255).
 */
function subscriptionProvider(byName: string, table: Pick<RoutingTable, "providers">, facts: AccountFacts): string {
  const kind = byName === "anthropic" ? "claude-code" : "codex";
  const pool = [...table.providers.values()]
    .filter((p) => p.kind === kind && facts.hasAccounts(p.id))
    .sort((a, b) => Number(b.source === "builtin") - Number(a.source === "builtin"));
  return pool[0]?.id ?? byName;
}

/**
 * Resolves a model name. Returns a {@link HubError} (404 `model_not_found`) for an unknown provider
 * prefix, an alias/combo whose target cannot be resolved, or a bare name that is a stored combo or alias
 * out of force ({@link RoutingTable.outOfForce}).
 */
export function resolveModel(name: string, table: RoutingTable): Resolution | HubError {
  const slash = name.indexOf("/");
  if (slash > 0) {
    const t = targetOf(name, table);
    if (!t) return unknownProvider(name);
    if (t.model.trim() === "") {
      return hubError("invalid_request", `The model \`${name}\` names provider \`${t.provider.id}\` but no model after the slash.`, { param: "model" });
    }
    return { targets: [t], via: "provider-prefix" };
  }
  const alias = table.aliases.get(name);
  if (alias !== undefined) {
    const inner = resolveModel(alias, table);
    if ("kind" in inner) return inner;
    return { ...inner, alias: name, via: "alias" };
  }
  const combo = table.combos.get(name);
  if (combo) {
    const targets: Target[] = [];
    const err = expandCombo(combo, table, targets, new Set());
    if (err) return err;
    return { targets, combo, via: "combo" };
  }
  const out = table.outOfForce?.get(name);
  if (out) return notInForce(name, out);
  const providerId = guessProvider(name, table);
  const provider = table.providers.get(providerId);
  if (!provider) return unknownProvider(`${providerId}/${name}`);
  return { targets: [{ provider, model: name, label: LABELS.of(providerId, name) }], via: "guess" };
}

/**
 * For a bare name that is no alias or combo (a guess, SPEC R-2): the alias or combo it is plausibly a
 * typo of (`codng` → `coding`, `Fast` → `fast`), by the table's {@link RoutingTable.suggest}; undefined
 * for a name with a slash, an exact alias or combo, no near one, or a table without `suggest`.
 */
export function nearAliasOrCombo(name: string, table: RoutingTable): string | undefined {
  if (!table.suggest || name.includes("/") || table.aliases.has(name) || table.combos.has(name)) return undefined;
  return table.suggest(name, [...table.aliases.keys(), ...table.combos.keys()]);
}

/** `provider/model` labels, one string per pair (./joined-text.ts: not a new rope per request). */
const LABELS = new JoinedText("/");

function targetOf(name: string, table: RoutingTable): Target | undefined {
  const slash = name.indexOf("/");
  const provider = table.providers.get(name.slice(0, slash));
  if (!provider) return undefined;
  const model = name.slice(slash + 1);
  return { provider, model, label: LABELS.of(provider.id, model) };
}

function expandCombo(combo: ComboSpec, table: RoutingTable, out: Target[], seen: Set<string>): HubError | undefined {
  if (seen.has(combo.name)) return hubError("invalid_request", `Combo ${combo.name} references itself.`);
  seen.add(combo.name);
  for (const spec of combo.targets) {
    if (spec.model.indexOf("/") > 0) {
      const t = targetOf(spec.model, table);
      if (!t) return unknownProvider(spec.model);
      out.push({
        ...t,
        accountId: spec.account,
        weight: spec.weight,
        params: spec.params,
        when: spec.when,
        combo: combo.name,
      });
      continue;
    }
    const aliased = table.aliases.get(spec.model) ?? spec.model;
    const nested = table.combos.get(aliased);
    if (nested) {
      const err = expandCombo(nested, table, out, seen);
      if (err) return err;
      continue;
    }
    const r = resolveModel(aliased, table);
    if ("kind" in r) return r;
    for (const t of r.targets) {
      out.push({ ...t, accountId: spec.account ?? t.accountId, weight: spec.weight ?? t.weight, params: spec.params ?? t.params, when: spec.when, combo: combo.name });
    }
  }
  seen.delete(combo.name);
  return undefined;
}

/**
 * The 404 `model_not_found` for a stored combo or alias that is not in force ({@link
 * RoutingTable.outOfForce}): until 2026-12-07 its name was guessed as a model (`{"model":"pinned"}` went
 * to an OpenAI account as model `pinned`) and only the log's warning said why.
 */
function notInForce(name: string, out: { kind: "combo" | "alias"; why: string }): HubError {
  return hubError(
    "model_not_found",
    `The ${out.kind} \`${name}\` created through the admin API or the dashboard is not in force: ${out.why}. Fix or delete it (GET /admin/api/${out.kind === "combo" ? "combos" : "aliases"} lists it with active: false and the reason), or put back what the config file's edit removed.`,
    { code: "model_not_found", param: "model" },
  );
}

/**
 * Whether a request that tries `earlier` has no use for `later` (a combo that reaches one model twice,
 * nested combos most often): the same model of the same provider, the same `params` (so the same body),
 * and the same pinned account or an unpinned `earlier`, whose attempts go through every eligible account
 * of the provider, that one included. Predicates are not compared: the order stage asks this of the
 * targets its predicates admitted ({@link dropRepeats}).
 */
export function repeatsTarget(earlier: Target, later: Target): boolean {
  if (earlier.provider.id !== later.provider.id || earlier.model !== later.model) return false;
  if (earlier.accountId !== undefined && earlier.accountId !== later.accountId) return false;
  return earlier.params === later.params || (earlier.params !== undefined && later.params !== undefined && JSON.stringify(earlier.params) === JSON.stringify(later.params));
}

/**
 * A list of targets with each one that repeats an earlier one ({@link repeatsTarget}) left out: the
 * first position wins. `dropped` is told each one left out with the index (in `list`) of the target it
 * repeats. Returns `list` itself when nothing repeats (a combo's usual case: no copy).
 */
export function dropRepeats(list: readonly Target[], dropped?: (t: Target, of: Target) => void): Target[] {
  let out: Target[] | undefined;
  for (let i = 1; i < list.length; i++) {
    const t = list[i]!;
    let of: Target | undefined;
    for (let j = 0; j < i && !of; j++) if (repeatsTarget(list[j]!, t)) of = list[j]; // transitive: a dropped one's cover covers t too
    if (!of) {
      out?.push(t);
      continue;
    }
    out ??= list.slice(0, i);
    dropped?.(t, of);
  }
  return out ?? (list as Target[]);
}

/** One target a combo reaches more than once ({@link comboRepeats}). */
export interface ComboRepeat {
  /** `provider/model`, with ` @ account` when pinned. */
  subject: string;
  /** The combo's written targets (0-based) that reach it: the first, then the repeat. */
  first: number;
  again: number;
}

/**
 * The targets a combo reaches more than once through its written targets (nested combos and aliases
 * followed), for check-config's warning: each repeat is tried once, at its first position ({@link
 * dropRepeats}). Predicates are not compared (a repeat behind a predicate is still a repeat when both
 * are admitted). A repeat inside one written target (a nested combo's own) is that combo's to report.
 * Empty for an unknown name or one that does not resolve.
 */
export function comboRepeats(name: string, table: RoutingTable): ComboRepeat[] {
  const combo = table.combos.get(name);
  if (!combo) return [];
  const reached: Array<{ t: Target; at: number }> = [];
  const repeats: ComboRepeat[] = [];
  combo.targets.forEach((spec, at) => {
    const out: Target[] = [];
    if (expandCombo({ ...combo, targets: [spec] }, table, out, new Set())) return;
    for (const t of out) {
      const earlier = reached.find((r) => r.at !== at && repeatsTarget(r.t, t));
      const subject = t.accountId ? `${t.label} @ ${t.accountId}` : t.label;
      if (earlier && !repeats.some((r) => r.subject === subject && r.again === at)) repeats.push({ subject, first: earlier.at, again: at });
    }
    for (const t of out) reached.push({ t, at });
  });
  return repeats;
}

function unknownProvider(name: string): HubError {
  const prefix = name.slice(0, Math.max(0, name.indexOf("/")));
  return hubError("model_not_found", `The model \`${name}\` does not exist: no provider named \`${prefix}\` is configured.`, {
    code: "model_not_found",
    param: "model",
  });
}

/** The environment variable the built-in default config reads an API key from, per built-in provider id. */
const DEFAULT_CONFIG_KEY_VARS: Record<string, string> = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY", gemini: "GEMINI_API_KEY" };

/**
 * How a user gives a provider its first account, for the errors of a provider without one (SPEC R-2):
 * a login or import for the subscription kinds, an `accounts:` entry otherwise, and for the built-in
 * API-key providers the variable the built-in default config reads (README "Configuration").
 */
export function addAccountHint(provider: Pick<ProviderInfo, "id" | "kind" | "source">): string {
  if (provider.kind === "claude-code" || provider.kind === "codex") {
    const which = provider.id === (provider.kind === "codex" ? "cx" : "cc") ? "" : ` --provider ${provider.id}`;
    return `log in with \`switchyard login ${provider.kind}${which}\` (or adopt the CLI's own login with \`switchyard import ${provider.kind}${which}\`)`;
  }
  const entry = `add an account under \`accounts:\` in the config file (\`provider: ${provider.id}\` with its \`api_key\`)`;
  const envVar = provider.source === "builtin" ? DEFAULT_CONFIG_KEY_VARS[provider.id] : undefined;
  return envVar ? `${entry}, or set ${envVar} before starting switchyard without a config file` : entry;
}

/**
 * The message of the 503 `no_account` a request for a provider without any account gets (one that
 * needs a key: a `*-compatible` one goes out keyless), "No account is configured for provider P: HOW.";
 * the Accounts page and `GET /admin/api/accounts` say the same for that provider.
 */
export function noAccountMessage(provider: Pick<ProviderInfo, "id" | "kind" | "source">): string {
  return `No account is configured for provider ${provider.id}: ${addAccountHint(provider)}.`;
}

