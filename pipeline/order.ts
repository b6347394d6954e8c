/**
 * order (SPEC R-3, 5.1, 5.2): the resolved targets → the order this request tries them in.
 *
 * Steps, each on a fresh copy of the resolved list (the configured combo is never mutated):
 *
 * 1. Strategy of the combo addressed (the outermost one; nested combos are already flattened in
 *    written order by resolve): `fallback` keeps the written order; `round-robin` rotates the start by
 *    one target per request; `weighted` draws the order proportionally to `weight` (the first target is
 *    target i with probability wᵢ/Σw; weighted sampling without replacement, Efraimidis–Spirakis);
 *    `least-used` puts the targets with the fewest lifetime requests first (stable for ties). Counts are
 *    kept in memory per target, seeded from the store's usage per model for the provider/model pairs of
 *    least-used combos' targets only (read at start for the configured ones; a pair a combo first orders
 *    later, after a reload, is read then; a least-used request waits for that read,
 *    {@link TargetOrder.seedWait}), and incremented for the target a request is ordered to try first.
 * 2. Predicates (SPEC 5.2, pipeline/predicates.ts) filter targets; unknown follows `when_unknown`.
 * 3. Attachment split: when the current user turn (the user turns after the last assistant turn)
 *    carries images, PDFs, audio or video, targets whose model is known to read every kind present
 *    (`models:` entry says so) come first, then the rest, each group in its previous order; an image
 *    given by remote URL counts as unreadable for a Gemini target (it takes no URL). When no
 *    target can, the capacity-adapter models of `settings.capacity_adapter` for those kinds go first
 *    (an adapter already in the list is moved rather than duplicated), those the request's client key
 *    may use (its `models` allow-list, SPEC 9.6); when it may use none, the order is kept with a warning.
 * 4. Quota: within each group (never across groups), targets that report per-model remaining quota go
 *    ahead, most remaining first; the others keep their order behind them.
 * 5. Repeats: a target that repeats one ahead of it (resolve.ts `repeatsTarget`: same model, provider,
 *    params, and account or an unpinned one ahead) is left out, so the first position wins; nested
 *    combos that reach one model twice sent the same body to the same account again after a 400.
 *
 * Every reorder and skip becomes a {@link DecisionTrace} (`moved`/`out`, with a reason). The same
 * {@link TargetOrder.plan} serves real requests (through the gateway's `order` hook) and the dry run
 * (with `dryRun`, which neither advances round-robin counters nor counts least-used requests).
 */
import { Warnings, type HubPart, type HubRequest, type WireFormat } from "../formats/hub.ts";
import { tryHubOf, type RequestContext } from "./context.ts";
import { affinityKey } from "./affinity.ts";
import { pickAccount, verdictDecision, type AccountPool, type PickHints } from "./pick.ts";
import type { DecisionTrace } from "./ports.ts";
import { decide, requestFacts, type RequestFacts } from "./predicates.ts";
import { addAccountHint, dropRepeats, nearAliasOrCombo, resolveModel, type ComboSpec, type Resolution, type RoutingTable, type Target } from "./resolve.ts";
import { siblingTargets } from "./siblings.ts";
import { allowListReach } from "./key-limits.ts";
import { markBudgetReach, type PlannedAttempt } from "./attempt-budget.ts";
import { LeastUsedSeed } from "./least-used-seed.ts";

/** Kinds of input a model may or may not read (SPEC R-3; `settings.capacity_adapter` keys). */
export type AttachmentKind = "images" | "pdf" | "audio" | "video";

/** Capacity-adapter models per attachment kind: `provider/model` names (SPEC 2.3 settings). */
export type CapacityAdapter = Record<AttachmentKind, string[]>;

/** A source of uniformly distributed numbers in [0, 1). */
export type Rng = () => number;

/**
 * A small seeded PRNG (mulberry32): the same seed gives the same sequence. For tests and for any
 * strategy that must be reproducible; not for secrets.
 */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The attachment kinds present in the current user turn: the user turns after the last assistant turn. */
export function currentTurnAttachments(hub: HubRequest): AttachmentKind[] {
  const kinds = new Set<AttachmentKind>();
  const visit = (p: HubPart): void => {
    switch (p.type) {
      case "image":
        kinds.add("images");
        return;
      case "audio":
        kinds.add("audio");
        return;
      case "video":
        kinds.add("video");
        return;
      case "document":
        // A plain-text document is text; anything else (base64, URL, file id) is read as a PDF.
        if (p.source.kind !== "text") kinds.add("pdf");
        return;
      case "tool_result":
        for (const c of p.content) visit(c);
        return;
      default:
        return;
    }
  };
  for (let i = hub.messages.length - 1; i >= 0; i--) {
    const m = hub.messages[i];
    if (m.role === "assistant") break;
    if (m.role === "user") for (const p of m.content) visit(p);
  }
  return (["images", "pdf", "audio", "video"] as const).filter((k) => kinds.has(k));
}

/**
 * Whether the current user turn (as {@link currentTurnAttachments}) carries an image given by remote
 * `http(s)` URL (also inside a tool result): a Gemini upstream cannot take one (only inline data, gs://
 * or Files API URIs, and the gateway does not fetch; formats/gemini/build.ts drops it with a
 * `dropped_media` warning), so for it such an image is unreadable (SPEC R-3).
 */
export function currentTurnRemoteImage(hub: HubRequest): boolean {
  const remote = (p: HubPart): boolean =>
    p.type === "image" ? p.source.kind === "url" && /^https?:/i.test(p.source.url) : p.type === "tool_result" && p.content.some(remote);
  for (let i = hub.messages.length - 1; i >= 0; i--) {
    const m = hub.messages[i];
    if (m.role === "assistant") break;
    if (m.role === "user" && m.content.some(remote)) return true;
  }
  return false;
}

/** Whether a target's upstream takes an image by remote URL (every format but Gemini's). */
const takesImageUrls = (t: Target): boolean => t.provider.format !== "gemini";

/** The subject of a target in decisions: its label, plus the pinned account when it names one. */
export function targetSubject(t: Target): string {
  return t.accountId ? `${t.label} @ ${t.accountId}` : t.label;
}

/** What the order stage reads from the application. */
export interface OrderDeps {
  routing: () => RoutingTable;
  /** `settings.capacity_adapter`. */
  capacityAdapter: () => CapacityAdapter;
  /**
   * The per-model remaining quota a target reports, as a fraction 0–1 (the best of the accounts that
   * may serve it), or undefined when none reports a window for this model.
   */
  quota?: (target: Target) => number | undefined;
  /** Randomness for `weighted`; default Math.random. Inject {@link seededRng} in tests. */
  rng?: Rng;
  /**
   * Asked ({@link TargetOrder.askSeed}: at start for the targets of the configured least-used combos,
   * then for any other target a least-used combo orders, dry runs included) to read the lifetime counts
   * of `pairs` (served `provider/model` names; each pair is asked once per process) and hand them to
   * {@link TargetOrder.seedUsage}: a gateway with no least-used combo never sums its usage table
   * (newuser15 N9, review15 R13), and the counts held are those of least-used targets, not of every
   * model name a client ever had served. May return a promise that settles when the counts are in, or
   * when least-used requests should stop waiting for them ({@link TargetOrder.seedWait}); must not
   * throw or reject.
   */
  loadSeed?: (pairs: ReadonlySet<string>) => Promise<void> | void;
}

/** The request-side input of a plan (what the gateway knows after the guard). */
export interface OrderRequest {
  clientFormat: WireFormat;
  requestedModel: string;
  /** The parsed body; undefined when it could not be parsed. */
  hub?: HubRequest;
  hubError?: string;
  keyTag?: string;
  /** The name of the client key the request presented, for the decisions' and the warning's words. */
  keyName?: string;
  /**
   * That key's `models` allow-list (SPEC 9.6; undefined: none): capacity-adapter targets it does not
   * allow are left out (key-limits.ts allowListReach), since the guard checked the requested name only.
   */
  keyModels?: readonly string[];
}

/** The outcome of ordering. */
export interface OrderPlan {
  targets: Target[];
  decisions: DecisionTrace[];
  facts: RequestFacts;
  /**
   * Set when the key's allow-list left out every capacity-adapter model for the attachments of the
   * current user turn, so the request goes to the targets it named (as with no adapter configured): the
   * `X-Switchyard-Warning` a real request carries (code `capacity_adapter_not_allowed`).
   */
  warning?: { code: string; message: string };
}

/** The order stage with its per-combo state (round-robin counters, least-used counts). */
export class TargetOrder {
  private readonly rr = new Map<string, number>();
  private readonly used = new Map<string, number>();
  private readonly seed = new LeastUsedSeed();
  /** Whether the configured least-used combos' targets were asked for ({@link askSeed} without targets). */
  private configuredAsked = false;
  private readonly rng: Rng;

  constructor(private readonly deps: OrderDeps) {
    this.rng = deps.rng ?? Math.random;
  }

  /**
   * Seeds least-used counts: lifetime requests per served `provider/model` (the store's usage summary
   * by model), so one model id on two providers starts from each provider's own count; each pair given
   * replaces that pair's seed, the others' are kept (a later read is of pairs not read before). A
   * target's count is its provider/model's seed plus the requests this process counted for it, so a
   * seed that arrives after the first requests (the gateway reads it after it listens: a long-lived
   * store's usage table took seconds to sum, newuser15 N9; it reads it at the first least-used request,
   * `OrderDeps.loadSeed`) loses none of them.
   */
  seedUsage(byModel: Map<string, number>): void {
    this.seed.set(byModel);
  }

  /**
   * Asks `deps.loadSeed` for the lifetime counts of `targets`' provider/model pairs not asked for yet
   * (each pair once per process, pipeline/least-used-seed.ts); without `targets`, of the targets of every
   * least-used combo of the configuration (at start, so the first least-used request after a restart is
   * ordered by them; once).
   */
  askSeed(targets?: readonly Target[]): void {
    if (targets === undefined) {
      if (this.configuredAsked) return;
      this.configuredAsked = true;
      const routing = this.deps.routing();
      const all: Target[] = [];
      for (const combo of routing.combos.values()) {
        const r = combo.strategy === "least-used" ? resolveModel(combo.name, routing) : undefined;
        if (r && !("kind" in r)) all.push(...r.targets);
      }
      targets = all;
    }
    this.seed.ask(targets, this.deps.loadSeed);
  }

  /**
   * What a request routed to `resolution` waits for before it is ordered: the lifetime counts' reads
   * (its targets' asked now when they were not yet) while one is under way and the combo is least-used
   * (SPEC 5.1: the fewest lifetime requests first, not this process's count alone); undefined otherwise
   * (every other request, and least-used ones once the reads settled). The wait ends when
   * `deps.loadSeed`'s promises settle (the app bounds each).
   */
  seedWait(resolution: Resolution): Promise<void> | undefined {
    if (resolution.combo?.strategy !== "least-used") return undefined;
    this.askSeed(resolution.targets);
    return this.seed.pending();
  }

  /** Lifetime requests counted for a target (least-used): its seed and this process's count. */
  usedCount(t: Target): number {
    return (this.used.get(targetSubject(t)) ?? 0) + this.seed.count(t);
  }

  /**
   * The order stage of a request (SPEC R-3), called by the gateway after resolve: orders the
   * resolution's targets and records the decisions in the route trace. A token count (count_tokens)
   * is ordered like a request but is not one: no strategy counter moves.
   */
  forRequest(ctx: RequestContext, resolution: Resolution): Target[] {
    // The common request: one target, no combo (no strategy, no least-used counter), no predicate and no
    // capacity adapter. Every step of `plan` keeps such a list as it is and records nothing, so it is
    // returned without the plan's per-request closures, getters and arrays (item 60).
    const targets = resolution.targets;
    if (targets.length === 1 && !resolution.combo && !targets[0].when && !hasAdapters(this.deps.capacityAdapter())) return targets;
    const plan = this.plan(requestOf(ctx), resolution, { dryRun: ctx.endpoint === "count_tokens" });
    ctx.trace.decisions.push(...plan.decisions);
    if (plan.warning) new Warnings(ctx.warnings).add(plan.warning.code, plan.warning.message);
    return plan.targets;
  }

  /** Orders a resolution's targets for one request. Pure except for the strategy counters (not in a dry run). */
  plan(req: OrderRequest, resolution: Resolution, opts: { dryRun?: boolean } = {}): OrderPlan {
    const decisions: DecisionTrace[] = [];
    // The request's facts need the parsed conversation: computed only when a predicate or the
    // attachment split needs them (a single plain target never parses the body here).
    let factsCache: RequestFacts | undefined;
    const facts = () =>
      (factsCache ??= requestFacts({
        hub: req.hub,
        hubError: req.hubError,
        clientFormat: req.clientFormat,
        requestedModel: req.requestedModel,
        alias: resolution.alias,
        combo: resolution.combo?.name,
        keyTag: req.keyTag,
      }));
    let list = resolution.targets.slice();

    // 1. strategy
    const combo = resolution.combo;
    if (combo && list.length > 1) list = this.applyStrategy(combo, list, decisions, opts.dryRun === true);

    // 2. predicates
    list = list.filter((t) => {
      if (!t.when) return true;
      const v = decide(t.when, facts(), t);
      decisions.push({ subject: targetSubject(t), verdict: v.admit ? "in" : "out", reason: `predicate: ${v.explanation}` });
      return v.admit;
    });

    // 3. attachment split → groups
    let groups: Target[][] = [list];
    let warning: OrderPlan["warning"];
    // With one target and no capacity adapter, there is nothing to reorder: the body is not parsed.
    const splitMatters = list.length > 1 || hasAdapters(this.deps.capacityAdapter());
    const kinds = splitMatters && req.hub ? currentTurnAttachments(req.hub) : [];
    if (kinds.length > 0 && list.length > 0) {
      const split = this.splitByCapability(list, kinds, kinds.includes("images") && currentTurnRemoteImage(req.hub!), decisions, req);
      groups = split.groups;
      warning = split.warning;
    }

    // 4. quota within groups
    const quota = this.deps.quota;
    if (quota) groups = groups.map((g) => sortByQuota(g, quota, decisions));

    // 5. a target that repeats one ahead of it (nested combos reaching one model twice) is left out:
    // the same body would go to the same account again after it failed there.
    const targets = dropRepeats(groups.flat(), (t, of) =>
      decisions.push({ subject: targetSubject(t), verdict: "out", reason: `repeats ${targetSubject(of)} ahead of it: the same model on the same account is tried once, at its first position` }),
    );
    if (combo?.strategy === "least-used" && targets.length > 0 && !opts.dryRun) {
      const k = targetSubject(targets[0]);
      this.used.set(k, (this.used.get(k) ?? 0) + 1);
    }
    return {
      targets,
      decisions,
      ...(warning ? { warning } : {}),
      get facts() {
        return facts();
      },
    };
  }

  private applyStrategy(combo: ComboSpec, list: Target[], decisions: DecisionTrace[], dryRun: boolean): Target[] {
    const before = list.slice();
    let after: Target[];
    let why: (t: Target) => string;
    switch (combo.strategy) {
      case "round-robin": {
        const turn = this.rr.get(combo.name) ?? 0;
        if (!dryRun) this.rr.set(combo.name, turn + 1);
        const start = turn % list.length;
        after = [...list.slice(start), ...list.slice(0, start)];
        why = () => `round-robin: request ${turn + 1} starts at target ${start + 1} of ${list.length}`;
        break;
      }
      case "weighted": {
        // Efraimidis–Spirakis: key = u^(1/w), highest first. P(first = i) = wᵢ/Σw.
        const total = list.reduce((s, t) => s + Math.max(0, t.weight ?? 1), 0);
        const keyed = list.map((t) => {
          const w = Math.max(0, t.weight ?? 1);
          const u = this.rng();
          return { t, k: w > 0 ? Math.pow(u, 1 / w) : -1 };
        });
        keyed.sort((a, b) => b.k - a.k);
        after = keyed.map((x) => x.t);
        const first = (t: Target) => (total > 0 ? Math.round((100 * Math.max(0, t.weight ?? 1)) / total) : 0);
        why = (t) => `weighted draw: weight ${t.weight ?? 1} of ${total} (${first(t)} % of requests try it first)${dryRun ? "; a dry run shows one draw, real requests draw again" : ""}`;
        if (dryRun) {
          // Every target's line, moved or not: a draw that kept the written order said nothing, and the
          // operator read one random order as the combo's (newuser13's tryout, J6).
          after.forEach((t, j) => {
            const i = before.indexOf(t);
            decisions.push({ subject: targetSubject(t), verdict: i === j ? "in" : "moved", reason: `${why(t)}; position ${i === j ? `${j + 1}, as written` : `${i + 1} → ${j + 1}`}` });
          });
          return after;
        }
        break;
      }
      case "least-used": {
        this.askSeed(list);
        const counts = new Map(list.map((t) => [t, this.usedCount(t)] as const));
        after = list
          .map((t, i) => ({ t, i }))
          .sort((a, b) => counts.get(a.t)! - counts.get(b.t)! || a.i - b.i)
          .map((x) => x.t);
        why = (t) => `least-used: ${counts.get(t)} lifetime requests`;
        break;
      }
      default:
        return list;
    }
    recordMoves(before, after, decisions, why);
    return after;
  }

  /**
   * Step 3; `remoteImage`: an image of the turn is given by remote URL, which a Gemini target cannot
   * take. Capacity-adapter targets are added only when the request's key may use them
   * ({@link OrderRequest.keyModels}); when it may use none, the order is kept as with no adapter, with a
   * warning.
   */
  private splitByCapability(list: Target[], kinds: AttachmentKind[], remoteImage: boolean, decisions: DecisionTrace[], req: OrderRequest): { groups: Target[][]; warning?: OrderPlan["warning"] } {
    const what = kinds.join(", ");
    const reads = (t: Target) => kinds.every((k) => t.provider.models[t.model]?.[k] === true);
    const can = (t: Target) => reads(t) && (!remoteImage || takesImageUrls(t));
    const capable = list.filter(can);
    const rest = list.filter((t) => !can(t));
    if (capable.length > 0) {
      const after = [...capable, ...rest];
      recordMoves(list, after, decisions, (t) =>
        can(t)
          ? `can read the ${what} in the current user turn`
          : reads(t)
            ? "cannot take the image given by remote URL in the current user turn: Gemini takes only inline data, gs:// or Files API URIs, and the gateway does not fetch (capable targets go first)"
            : `not known to read the ${what} in the current user turn (capable targets go first)`,
      );
      return { groups: rest.length > 0 ? [capable, rest] : [capable] };
    }
    // No target can read it: the capacity adapters for these kinds go first.
    const table = this.deps.routing();
    const adapterCfg = this.deps.capacityAdapter();
    const names: string[] = [];
    for (const k of kinds) for (const n of adapterCfg[k] ?? []) if (!names.includes(n)) names.push(n);
    const adapters: Target[] = [];
    /** Adapter targets the key's allow-list leaves out (SPEC 9.6). */
    const barred: string[] = [];
    const allowed = allowListReach(req.keyModels, table);
    let remaining = list.slice();
    for (const n of names) {
      const present = remaining.find((t) => t.label === n && !t.accountId);
      if (present) {
        remaining = remaining.filter((t) => t !== present);
        adapters.push(present);
        decisions.push({ subject: targetSubject(present), verdict: "moved", reason: `capacity adapter for ${what}: no candidate can read the current user turn` });
        continue;
      }
      const r = resolveModel(n, table);
      if ("kind" in r) {
        decisions.push({ subject: n, verdict: "out", reason: `capacity adapter for ${what} cannot be resolved: ${r.message}` });
        continue;
      }
      for (const t of r.targets) {
        if (!allowed(n, t)) {
          barred.push(targetSubject(t));
          decisions.push({ subject: targetSubject(t), verdict: "out", reason: `capacity adapter for ${what}: not in the models allow-list of client key "${req.keyName ?? "?"}"` });
          continue;
        }
        adapters.push(t);
        decisions.push({ subject: targetSubject(t), verdict: "in", reason: `capacity adapter for ${what}: no candidate can read the current user turn` });
      }
    }
    if (adapters.length === 0 && barred.length > 0) {
      decisions.push({
        subject: "(capability split)",
        verdict: "in",
        reason: `the current user turn carries ${what}; no candidate is known to read it and the models allow-list of client key "${req.keyName ?? "?"}" leaves out every capacity adapter for it (${barred.join(", ")}): order kept`,
      });
      const message = `The current user turn carries ${what}, which the model requested is not known to read; the capacity adapter's models for ${what} are not in the models allow-list of client key "${req.keyName ?? "?"}", so the request went to the model requested.`;
      return { groups: [list], warning: { code: "capacity_adapter_not_allowed", message } };
    }
    if (adapters.length === 0) {
      decisions.push({ subject: "(capability split)", verdict: "in", reason: `the current user turn carries ${what}; no candidate is known to read it and no capacity adapter is configured: order kept` });
      return { groups: [list] };
    }
    return { groups: remaining.length > 0 ? [adapters, remaining] : [adapters] };
  }
}

/** The order request of a live request; the body is parsed into the hub on first need only. */
function requestOf(ctx: RequestContext): OrderRequest {
  let hub: HubRequest | undefined;
  let hubError: string | undefined;
  let parsed = false;
  const parse = () => {
    if (parsed) return;
    parsed = true;
    hub = tryHubOf(ctx, (e) => (hubError = `the request body could not be parsed (${e instanceof Error ? e.message.slice(0, 120) : "invalid"})`));
  };
  return {
    clientFormat: ctx.clientFormat,
    requestedModel: ctx.requestedModel,
    keyTag: ctx.key?.tag,
    keyName: ctx.key?.name,
    keyModels: ctx.key?.limits?.models,
    get hub() {
      parse();
      return hub;
    },
    get hubError() {
      parse();
      return hubError;
    },
  };
}

/** Whether any capacity adapter is configured (SPEC R-3). */
function hasAdapters(c: CapacityAdapter): boolean {
  for (const k in c) if ((c[k as keyof CapacityAdapter]?.length ?? 0) > 0) return true;
  return false;
}

/** Records a `moved` decision for every target whose position changed (1-based positions). */
function recordMoves(before: Target[], after: Target[], decisions: DecisionTrace[], why: (t: Target) => string): void {
  after.forEach((t, j) => {
    const i = before.indexOf(t);
    if (i !== j) decisions.push({ subject: targetSubject(t), verdict: "moved", reason: `${why(t)}; position ${i + 1} → ${j + 1}` });
  });
}

/** Within one group: targets reporting quota first, most remaining first; the others keep their order. */
function sortByQuota(group: Target[], quota: (t: Target) => number | undefined, decisions: DecisionTrace[]): Target[] {
  if (group.length < 2) return group; // nothing to reorder (the common single-target request)
  const q = new Map<Target, number>();
  for (const t of group) {
    const v = quota(t);
    if (v !== undefined) q.set(t, v);
  }
  if (q.size === 0) return group;
  const reporting = group.filter((t) => q.has(t)).map((t, i) => ({ t, i }));
  reporting.sort((a, b) => q.get(b.t)! - q.get(a.t)! || a.i - b.i);
  const after = [...reporting.map((x) => x.t), ...group.filter((t) => !q.has(t))];
  recordMoves(group, after, decisions, (t) =>
    q.has(t) ? `reports ${Math.round(q.get(t)! * 100)} % quota left for ${t.model}` : "reports no per-model quota (reporting targets go first)",
  );
  return after;
}

// ---------------------------------------------------------------------------------------------
// Dry run (SPEC 2.2 `route`, 9.3 POST /admin/api/dry-run)
// ---------------------------------------------------------------------------------------------

/** One account of a target in a dry run. */
export interface PlannedAccount {
  accountId: string;
  verdict: "in" | "out";
  reason: string;
  /** ms since the epoch when an exclusion ends, if it does. */
  until?: number;
}

/** One target in a dry run, in the order the request would try it. */
export interface PlannedTarget {
  target: string;
  providerId: string;
  model: string;
  /** "out" when the provider's circuit is open or no account is eligible. */
  verdict: "in" | "out";
  reason?: string;
  /** Eligible accounts in the order attempts would use them, then the excluded ones. */
  accounts: PlannedAccount[];
  /** SPEC R-10: set on a sibling tried because every account of the target before it has had this model removed. */
  siblingOf?: string;
}

/** A dry run: what a real request would do, without calling upstream. */
export interface RoutePlan {
  requestedModel: string;
  clientFormat: WireFormat;
  via: Resolution["via"];
  alias?: string;
  combo?: string;
  /** The resolved targets, before ordering. */
  candidates: string[];
  /**
   * For a name taken as a guess (`via: "guess"`): the alias or combo it is plausibly a typo of
   * (resolve.ts {@link nearAliasOrCombo}; `codng` → `coding`), as a real request's 404 names it.
   */
  nearName?: string;
  targets: PlannedTarget[];
  /**
   * Every (target, account) in the order attempts would take if each failed over to the next: `target`
   * is the target's `provider/model` label without a pinned account (the account is `accountId`), as a
   * real request's trace names its attempts (ports.ts `AttemptTrace.target`). `notReached` says why a
   * request would never get to one: it lies beyond `settings.max_attempts` (each candidate needs an
   * attempt); `notReachedIf`, that it is not reached when an earlier non-streamed call never answers (the
   * pre-commit deadline passes while it waits): attempt-budget.ts {@link markBudgetReach}.
   */
  attempts: PlannedAttempt[];
  /** Target-level decisions (strategy, predicates, capability split, quota). */
  decisions: DecisionTrace[];
  /** The affinity key kind in effect: a session header, a fingerprint, or none. */
  affinity: "session" | "fingerprint" | "off" | "none";
}

/** What the dry run needs besides the order stage. */
export interface PlanDeps {
  pool: AccountPool;
  /** Read-only circuit check (must not consume a half-open probe). */
  circuitOpen: (providerId: string) => boolean;
  /** `settings.max_attempts` (SPEC 6.1): the attempts after that many are marked `notReached`; none when absent. */
  maxAttempts?: number;
  /** `settings.precommit_deadline_ms` (SPEC 6.1): the attempts after a non-streamed call that may outwait it are marked `notReachedIf`; none when absent. */
  precommitDeadlineMs?: number;
}

/**
 * {@link planRoute} ordered as a real request of `req.requestedModel` is: when it routes to a
 * least-used combo, the plan first waits for the lifetime counts' read that such a request waits for
 * ({@link TargetOrder.seedWait}: under way after a restart, or asked by this call when none was yet, e.g.
 * after a reload added the combo; bounded by the app, 1 s), so a dry run then orders by the lifetime
 * counts, not by this process's counts alone (its order differed from the request's). Other plans are
 * made at once.
 */
export async function planRouteSeeded(
  order: TargetOrder,
  table: RoutingTable,
  req: OrderRequest & { headers: Headers },
  deps: PlanDeps,
): Promise<RoutePlan | { error: { status: number; message: string } }> {
  const resolution = resolveModel(req.requestedModel, table);
  const seed = "kind" in resolution ? undefined : order.seedWait(resolution);
  if (seed) await seed;
  return planRoute(order, table, req, deps);
}

/**
 * Runs resolve → order → pick for a request without calling upstream or changing any state (SPEC 2.2
 * `route`): the same functions as a real request ({@link resolveModel}, {@link TargetOrder.plan},
 * {@link pickAccount} against the live pool), with strategy counters frozen. A target whose model every
 * account has had removed (SPEC 6.3, the upstream said it does not exist) is followed by the model's
 * siblings (R-10), as the attempt loop inserts them. Returns the plan, or the resolution error (404 for
 * an unknown provider prefix).
 */
export function planRoute(
  order: TargetOrder,
  table: RoutingTable,
  req: OrderRequest & { headers: Headers },
  deps: PlanDeps,
): RoutePlan | { error: { status: number; message: string } } {
  const resolution = resolveModel(req.requestedModel, table);
  if ("kind" in resolution) return { error: { status: resolution.status, message: resolution.message } };
  const plan = order.plan(req, resolution, { dryRun: true });
  const near = resolution.via === "guess" ? nearAliasOrCombo(req.requestedModel, table) : undefined;
  const key = affinityKey(req.headers, req.hub, req.requestedModel);
  const affinityOn = resolution.combo ? resolution.combo.cacheAffinity : true;
  const hints: PickHints & { dryRun: true } = { affinityKey: key, affinity: affinityOn, dryRun: true };
  const targets: PlannedTarget[] = [];
  const attempts: RoutePlan["attempts"] = [];
  /** The provider of each attempt (markBudgetReach). */
  const providers: Target["provider"][] = [];
  const queue = plan.targets.slice();
  let decisions = plan.decisions;
  for (let ti = 0; ti < queue.length; ti++) {
    const t = queue[ti]!;
    const pt: PlannedTarget = { target: targetSubject(t), providerId: t.provider.id, model: t.model, verdict: "in", accounts: [] };
    if (t.siblingOf) {
      pt.siblingOf = t.siblingOf;
      pt.reason = `sibling of ${t.siblingOf}`;
    }
    targets.push(pt);
    if (deps.circuitOpen(t.provider.id)) {
      pt.verdict = "out";
      pt.reason = `provider ${t.provider.id} circuit open`;
      continue;
    }
    // The same loop as the attempt loop: pick, mark tried, pick again. The first pick's exclusions
    // are the accounts that are out.
    const tried = new Set<string>();
    const first = pickAccount(deps.pool, t, tried, hints);
    for (let picked = first; picked.account; picked = pickAccount(deps.pool, t, tried, hints)) {
      const id = picked.account.id;
      const chosen = picked.verdicts.find((v) => v.verdict === "in")!;
      const reason = tried.size === 0 ? verdictDecision(t, chosen).reason : (chosen.note ?? "eligible");
      pt.accounts.push({ accountId: id, verdict: "in", reason });
      attempts.push({ target: t.label, accountId: id });
      providers.push(t.provider);
      tried.add(id);
    }
    for (const v of first.verdicts) {
      if (v.verdict === "out") pt.accounts.push({ accountId: v.accountId, verdict: "out", reason: verdictDecision(t, v).reason, until: v.until });
    }
    if (tried.size === 0) {
      pt.verdict = "out";
      const out = first.verdicts.filter((v) => v.verdict === "out");
      if (out.length > 0 && out.every((v) => v.cause === "removed")) {
        // The attempt loop's rule (attempt-loop.ts modelGone): every account has had the model removed, so
        // the request gets its 404 model_not_found here, and the model's siblings come next (R-10).
        const siblings = t.siblingOf ? [] : siblingTargets(t);
        queue.splice(ti + 1, 0, ...siblings);
        if (siblings.length > 0 && decisions === plan.decisions) decisions = plan.decisions.slice();
        for (const s of siblings) decisions.push({ subject: s.label, verdict: "in", reason: `sibling of ${t.model}: the upstream said ${t.model} does not exist` });
        const gone = `the upstream said ${t.model} does not exist for every account of ${t.provider.id} (removed pairing, 404 model_not_found)`;
        const next = siblings.length > 0 ? `its siblings come next: ${siblings.map((s) => s.model).join(", ")}` : t.siblingOf ? "no further siblings" : "no sibling known";
        pt.reason = `${pt.reason ? `${pt.reason}; ` : ""}${gone}; ${next}`;
      } else {
        // No account at all (rather than none eligible now): the request would fail the same way, so say how to add one.
        const why = first.verdicts.length === 0 ? `no account is configured for ${t.provider.id}: ${addAccountHint(t.provider)}` : `no eligible account of ${t.provider.id} for ${t.model}`;
        pt.reason = pt.reason ? `${pt.reason}; ${why}` : why;
      }
    }
  }
  // What the fallback budget reaches (SPEC 6.1): not the attempts past max_attempts, nor those after a non-streamed call that may outwait the deadline.
  markBudgetReach(attempts, providers, { maxAttempts: deps.maxAttempts, precommitDeadlineMs: deps.precommitDeadlineMs, clientStream: req.hub?.stream === true });
  return {
    requestedModel: req.requestedModel,
    clientFormat: req.clientFormat,
    via: resolution.via,
    alias: resolution.alias,
    combo: resolution.combo?.name,
    candidates: resolution.targets.map(targetSubject),
    ...(near ? { nearName: near } : {}),
    targets,
    attempts,
    decisions,
    affinity: !key ? "none" : !affinityOn ? "off" : key.startsWith("s:") ? "session" : "fingerprint",
  };
}
