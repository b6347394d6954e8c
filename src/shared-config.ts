/**
 * Instances on one PostgreSQL whose config files disagree about what they share (newuser12a G24): one
 * key with other limits, other `settings.pricing`, other alert thresholds or another `max_concurrency`
 * for an account enforce each their own on one shared pool, without a word; another alert webhook sends
 * the alerts the other instances claim to the other URL (try20 D3: rotated on one instance, the pool's
 * alerts kept going to the old one). Each instance publishes the
 * values that count in the shared pool ({@link sharedConfigParts}; never a secret) into the shared store
 * at start, on every reload and every {@link SHARED_CONFIG_CHECK_MS}, compares them with the other
 * running instances' ({@link configDifferences}) and logs a warning naming each difference, with both
 * values, when the set of differences changes (at start and on a reload: whenever there is one). A
 * reload's answer (`POST /admin/api/config/reload`, `switchyard reload`, the Routing page's card)
 * carries them as warnings too ({@link SharedConfigWatch.differences}).
 */
import { createHash, scrypt } from "node:crypto";
import type { RuntimeConfig } from "./config/types.ts";
import { webhookUrlShown } from "./show-url.ts";
import type { InstanceConfig, SharedStore } from "./store/shared.ts";

/** How often an instance re-publishes its values (it still runs) and compares, ms. */
export const SHARED_CONFIG_CHECK_MS = 30_000;
/** Another instance whose values are older than this has stopped (or lost the database), ms. */
export const SHARED_CONFIG_MAX_AGE_MS = 3 * SHARED_CONFIG_CHECK_MS;

/**
 * The scrypt cost of a config key secret's fingerprint ({@link secretFingerprint}): N = 2^15, r = 8,
 * p = 1 (RFC 7914; 32 MiB and ~0.1 s of one core per secret, so per guess of whoever reads the table).
 */
export const SECRET_FINGERPRINT_COST = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

/**
 * The fingerprint a config key's secret is published as in `instance_configs` (`keys.NAME.secret`):
 * 12 hex digits of scrypt(secret, salt "switchyard instance_configs SALT NAME", {@link SECRET_FINGERPRINT_COST}),
 * SALT the database's own random salt (`SharedStore.instanceConfigSalt`, made once by its first
 * instance). The same on every instance of that database (deterministic), so equal secrets compare
 * equal across instances; slow, so that whoever can read the database cannot test guesses of a short,
 * human-chosen secret at the speed of SHA-256 (a reviewer's read of G24: it was 12 hex of
 * SHA-256(SHA-256(secret)), 48 bits tested at billions a second); salted per database, so that no table
 * of guesses for common key names computed once serves every deployment (review14 R8: the salt was the
 * key's name alone). Computed off the event loop (libuv's pool).
 */
export function secretFingerprint(salt: string, name: string, secret: string): Promise<string> {
  return new Promise((resolve, reject) =>
    scrypt(secret, `switchyard instance_configs ${salt} ${name}`, 32, SECRET_FINGERPRINT_COST, (err, key) => (err ? reject(err) : resolve(key.toString("hex").slice(0, 12)))),
  );
}

/**
 * Each config key's {@link secretFingerprint} by name, each computed once per name and secret (the
 * check runs every 30 s), all at once (libuv's pool runs up to four: a file with many keys does not
 * wait for one after another, review14 R8); `cache` keeps those of the keys given (a key removed or
 * changed is dropped), keyed by name and the secret's SHA-256, never the secret.
 */
async function fingerprints(salt: string, keys: RuntimeConfig["keys"], cache: Map<string, Promise<string>>): Promise<Map<string, string>> {
  const wanted = new Map<string, RuntimeConfig["keys"][number]>(keys.map((k) => [`${k.name}\u0000${createHash("sha256").update(k.secret).digest("hex")}`, k]));
  for (const id of cache.keys()) if (!wanted.has(id)) cache.delete(id);
  const pending: Array<Promise<[string, string]>> = [];
  for (const [id, k] of wanted) {
    let p = cache.get(id);
    if (!p) {
      cache.set(id, (p = secretFingerprint(salt, k.name, k.secret)));
      p.catch(() => cache.delete(id)); // computed again at the next check
    }
    pending.push(p.then((print) => [k.name, print]));
  }
  return new Map(await Promise.all(pending));
}

/** The alert webhook's path; an instance of a build before try20 D3 does not publish it (not compared with one). */
const WEBHOOK = "settings.alerts.webhook";

/** Paths whose values are fingerprints, not shown (a key's secret). */
const HIDDEN = /\.secret$/;

/** Sorts object keys recursively, so equal values have equal JSON text. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) if ((v as Record<string, unknown>)[k] !== undefined) out[k] = canonical((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
const text = (v: unknown): string => JSON.stringify(canonical(v ?? null));

/**
 * The values of `cfg` that count in a pool the instances share, path → JSON text: each config key's
 * `limits`, `scopes` and `tag` (`keys.NAME.limits`, …) and its secret's fingerprint from `prints` (by key
 * name, {@link secretFingerprint}; `keys.NAME.secret`: whether both accept the same secret, never the
 * secret), `settings.pricing` (the
 * key budgets' dollars), `settings.alerts.quota_thresholds` and `settings.alerts.webhook` (alerts are
 * claimed once across instances, then posted by the claimer to its own webhook; the URL as the settings
 * API shows it, `scheme://host/… (sha256 <8 hex of the whole URL>)`, never its path or query, where a
 * token lives) and each config account's `max_concurrency` (slots counted across instances).
 */
export function sharedConfigParts(cfg: RuntimeConfig, prints: ReadonlyMap<string, string>): Record<string, string> {
  const parts: Record<string, string> = {};
  for (const k of cfg.keys) {
    parts[`keys.${k.name}.limits`] = text(k.limits);
    parts[`keys.${k.name}.scopes`] = text([...(k.scopes ?? [])].sort());
    parts[`keys.${k.name}.tag`] = text(k.tag);
    parts[`keys.${k.name}.secret`] = text(prints.get(k.name) ?? null);
  }
  parts["settings.pricing"] = text(Object.fromEntries([...cfg.settings.pricing].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
  parts["settings.alerts.quota_thresholds"] = text(cfg.settings.alerts.quotaThresholds);
  const hook = cfg.settings.alerts.webhook;
  parts[WEBHOOK] = text(hook === undefined ? null : webhookUrlShown(hook));
  for (const a of cfg.accounts) parts[`accounts.${a.id}.max_concurrency`] = text(a.maxConcurrency);
  return parts;
}

/** One value that differs between this instance and another. */
export interface ConfigDifference {
  /** `keys.ci.limits`, `settings.pricing`, `accounts.glm-main.max_concurrency`. */
  path: string;
  /** The other instance's label (its URL). */
  other: string;
  /** JSON text here / there; undefined where that instance does not declare it. Hidden values are `"(differs)"`. */
  here?: string;
  there?: string;
  /**
   * Set when the difference is a whole config key declared by one of the two only (path `keys.NAME`;
   * here / there its limits, undefined on the side without it): one entry, not one per field (try20 D7).
   */
  key?: string;
}

/**
 * Where `mine` and each of `others` differ: a path both have with other values, or one only one of them
 * has (a key declared on one instance only), in path order per instance. A key's secret fingerprint is
 * reported as differing, never shown; it is not compared with an instance whose fingerprints are salted
 * otherwise (`saltedPerDatabase` false: an earlier version's, during a rolling upgrade to schema 17,
 * whose every key's secret read as different, review15 R7): a key declared on one of them only is still
 * reported, by its other paths.
 */
export function configDifferences(mine: Record<string, string>, others: readonly InstanceConfig[]): ConfigDifference[] {
  const out: ConfigDifference[] = [];
  for (const o of others) {
    const paths = [...new Set([...Object.keys(mine), ...Object.keys(o.parts)])].sort();
    const keysHere = keyNames(mine);
    const keysThere = keyNames(o.parts);
    for (const path of paths) {
      const field = KEY_FIELD.exec(path);
      if (field && keysHere.has(field[1]!) !== keysThere.has(field[1]!)) {
        // A key one side only declares: one entry, at its first field (limits, scopes, secret, tag: limits sorts first).
        const name = field[1]!;
        if (paths.find((p) => KEY_FIELD.exec(p)?.[1] === name) !== path) continue;
        const limits = `keys.${name}.limits`;
        out.push({ path: `keys.${name}`, other: o.label, here: mine[limits] ?? (keysHere.has(name) ? "null" : undefined), there: o.parts[limits] ?? (keysThere.has(name) ? "null" : undefined), key: name });
        continue;
      }
      const here = mine[path];
      const there = o.parts[path];
      if (here === there) continue;
      if (o.saltedPerDatabase === false && HIDDEN.test(path)) continue;
      if (path === WEBHOOK && (here === undefined || there === undefined)) continue;
      const hide = (v: string | undefined) => (v !== undefined && HIDDEN.test(path) ? "(differs)" : v);
      out.push({ path, other: o.label, here: hide(here), there: hide(there) });
    }
  }
  return out;
}

/** A config key's field path (`keys.NAME.limits`): [, NAME, field]. */
const KEY_FIELD = /^keys\.(.+)\.(limits|scopes|tag|secret)$/;

/** The names of the config keys an instance's values declare. */
function keyNames(parts: Record<string, string>): Set<string> {
  const out = new Set<string>();
  for (const p of Object.keys(parts)) {
    const m = KEY_FIELD.exec(p);
    if (m) out.add(m[1]!);
  }
  return out;
}

/**
 * A difference as a sentence: `keys.ci.limits is {"rpm":60} here and {"rpm":10} on http://…`; a key one
 * side only declares: `key ci is declared in this instance's config file (limits {"rpm":30}) and not in http://…'s`
 * (no limits: no parenthesis).
 */
export function differenceText(d: ConfigDifference): string {
  if (d.key !== undefined) {
    const limits = (v: string | undefined) => (v === undefined || v === "null" ? "" : ` (limits ${v})`);
    return d.here !== undefined
      ? `key ${d.key} is declared in this instance's config file${limits(d.here)} and not in ${d.other}'s`
      : `key ${d.key} is not declared in this instance's config file and is in ${d.other}'s${limits(d.there)}`;
  }
  if (d.here === undefined) return `${d.path} is not declared here and is ${d.there} on ${d.other}`;
  if (d.there === undefined) return `${d.path} is ${d.here} here and not declared on ${d.other}`;
  if (HIDDEN.test(d.path)) return `${d.path} differs between here and ${d.other} (a different secret)`;
  return `${d.path} is ${d.here} here and ${d.there} on ${d.other}`;
}

/** What {@link watchSharedConfig} returns. */
export interface SharedConfigWatch {
  /**
   * Publishes the configuration in force now and compares it with the other instances' (a start or a
   * reload: logs the differences whenever there are some); a call while a check of the same
   * configuration runs gets that one's answer (a check of an earlier one is waited for, then this one
   * runs). Never throws: a store that is away is skipped until the next check.
   */
  check(why: "start" | "reload"): Promise<ConfigDifference[]>;
  /** The differences found by the last check (empty before the first or when none). */
  differences(): ConfigDifference[];
  stop(): void;
}

/**
 * Keeps this instance's values of the shared configuration in the shared store and warns when other
 * running instances' differ (see the module comment). Undefined for a store without other instances.
 * @param label how the other instances name this one (its URL)
 * @param log one JSON line per call (SPEC O-4)
 * @param origin where this instance runs, one live instance at a time (e.g. a hash of host and data
 *   directory): its killed predecessor's row is replaced, not read as another instance's
 */
export function watchSharedConfig(
  store: Pick<SharedStore, "publishInstanceConfig" | "otherInstanceConfigs" | "instanceConfigSalt">,
  config: () => RuntimeConfig,
  label: string,
  log: (line: string) => void,
  now: () => number,
  intervalMs = SHARED_CONFIG_CHECK_MS,
  origin?: string,
): SharedConfigWatch | undefined {
  const publish = store.publishInstanceConfig?.bind(store);
  const others = store.otherInstanceConfigs?.bind(store);
  const saltOf = store.instanceConfigSalt?.bind(store);
  if (!publish || !others || !saltOf) return undefined;
  let salt: string | undefined;
  let last: ConfigDifference[] = [];
  let lastKey = "";
  const cache = new Map<string, Promise<string>>();
  const run = async (why: "start" | "reload" | "timer"): Promise<ConfigDifference[]> => {
    try {
      const cfg = config();
      salt ??= await saltOf();
      const mine = sharedConfigParts(cfg, await fingerprints(salt, cfg.keys, cache));
      await publish(label, mine, origin);
      const found = configDifferences(mine, await others(Math.max(SHARED_CONFIG_MAX_AGE_MS, 3 * intervalMs)));
      const key = JSON.stringify(found);
      if (found.length > 0 && (why !== "timer" || key !== lastKey)) {
        const msg = `instances sharing this database enforce different config for the shared pool (each its own, without a word to the clients): ${found.map(differenceText).join("; ")}. Give their config files the same values (switchyard reload on each after the change).`;
        log(JSON.stringify({ level: "warn", time: now(), msg, differences: found.map((d) => d.path) }));
      } else if (found.length === 0 && lastKey !== "" && lastKey !== "[]") {
        log(JSON.stringify({ level: "info", time: now(), msg: "instances sharing this database now enforce the same config for the shared pool" }));
      }
      last = found;
      lastKey = key;
      return found;
    } catch {
      return last; // the store is away: the next check tries again
    }
  };
  // A reload's own check (the configuration applied) and its answer's (the admin route) are one check.
  // A check joins the one running only when that one compares the same configuration: one begun
  // before a reload (a timer's, still fingerprinting the old keys: scrypt takes ~0.1 s a key, longer
  // on a busy machine) would answer the reload without its changes, so the reload's runs after it.
  let inFlight: { of: RuntimeConfig; done: Promise<ConfigDifference[]> } | undefined;
  const once = (why: "start" | "reload" | "timer"): Promise<ConfigDifference[]> => {
    const of = config();
    if (inFlight?.of === of) return inFlight.done;
    const entry: { of: RuntimeConfig; done: Promise<ConfigDifference[]> } = {
      of,
      done: (inFlight?.done ?? Promise.resolve([])).then(
        () => run(why),
        () => run(why),
      ).finally(() => {
        if (inFlight === entry) inFlight = undefined;
      }),
    };
    inFlight = entry;
    return entry.done;
  };
  const timer = setInterval(() => void once("timer"), intervalMs);
  timer.unref?.();
  return { check: (why) => once(why), differences: () => last, stop: () => clearInterval(timer) };
}
