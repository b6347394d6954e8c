/**
 * Loading the configuration file (SPEC 2.3): YAML (Bun's built-in parser, `Bun.YAML.parse`) →
 * valibot shape check with defaults (schema.ts) → secrets (`env:`/`file:`) → built-in providers merged
 * → cross-reference checks → {@link RuntimeConfig}.
 *
 * Every problem found is reported at once in one {@link ConfigError}, each naming the path of the
 * offending key (`combos[1].targets[0].model`). Messages never contain a secret value.
 *
 * Cross-reference rules (all errors unless noted):
 * - ids are unique: `providers[].id`, `accounts[].id`, `combos[].name`, `keys[].name`; two keys may not
 *   share a secret; (a warning, not an error: an alias named like a combo shadows it, SPEC R-2);
 * - `accounts[].provider` names a built-in or configured provider; the credential fits its kind
 *   (`api_key` for API kinds — optional for `*-compatible`, e.g. a local Ollama —, `access_token` for
 *   claude-code/codex, and `refresh_token`/`expires_at`/`account_id` only next to `access_token`);
 * - a combo target's `model` (and an alias's target) is `provider/model` with a known provider prefix
 *   (prefix = text before the first `/`), or an alias, or a combo;
 * - `targets[].account` exists, and belongs to the target's provider (so the target must be
 *   `provider/model`);
 * - combos and aliases that reference each other in a cycle: reported at the reference that closes it;
 * - `settings.capacity_adapter.*` entries are `provider/model` with a known provider;
 * - `oauth` only on claude-code/codex providers; `kind` of a built-in id cannot change;
 * - `base_url` follows the vendor SDK convention (SPEC 2.3): an Anthropic-format URL must not end in
 *   `/v1/messages`, an OpenAI-format one not in `/chat/completions` or `/responses`, a Gemini one must
 *   not contain `/v1beta` (warning only: an Anthropic-format URL ending in `/v1`).
 * The providers section is built by build-providers.ts.
 */
import { KIND_TRAITS } from "../../formats/codec.ts";
import { MAX_JSON_DEPTH } from "../../formats/json-depth.ts";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import * as v from "valibot";
import type { Account, Credential, KeyLimits } from "../../pipeline/ports.ts";
import { CLIENT_KEY_PLACEHOLDERS, comboRepeats } from "../../pipeline/index.ts";
import { ENV_ACCOUNTS, isSubscriptionKind } from "./builtins.ts";
import { buildProviders } from "./build-providers.ts";
import {
  ConfigError,
  type ConfigIssue,
  cycleMessage,
  DEFAULT_MESSAGE,
  formatPath,
  issueFromValibot,
  type PathSegment,
  type ReferenceCycle,
  ROOT_PATH,
  suggest,
} from "./errors.ts";
import { duplicateKeys, withLines } from "./duplicate-keys.ts";
import { lookalikeClause, lookalikeOf } from "./lookalike-names.ts";
import { type ConfigFile, ConfigFileSchema, type KeyLimitsSchema, MODEL_NAME_RE, MODEL_NAME_RULE } from "./schema.ts";
import { type Env, resolveSecret } from "./secrets.ts";
import type {
  Combo,
  ComboTarget,
  ConfigKey,
  RuntimeConfig,
  ServerConfig,
  Settings,
  TargetRef,
} from "./types.ts";

export type { Env } from "./secrets.ts";

/** Options of {@link parseConfig}. */
export interface ParseOptions {
  /** Folder `file:` secrets are relative to (the config file's folder). Default: the working directory. */
  baseDir?: string;
  /** Environment for `env:` secrets and REQUIRE_API_KEY. Default: `process.env`. */
  env?: Env;
  /** The file the text came from, recorded in `source.path` and error messages. */
  path?: string;
  /** Clock for `source.loadedAt`, ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /**
   * Whether `switchyard start --database` was given. The flag wins over the document's
   * `server.database` (SPEC D-2), so an `env:NAME` there naming an unset variable, or a `file:` that
   * cannot be read, is then a warning, not an error, and `server.database` is left unset.
   */
  databaseFlag?: boolean;
}

/** Whether an environment flag is on: `true`, `1`, `yes` or `on` (any case). */
export function envFlag(value: string | undefined): boolean {
  return value !== undefined && /^(true|1|yes|on)$/i.test(value.trim());
}

/**
 * Parses YAML text with `Bun.YAML.parse`. Bun's errors carry no position, so on a syntax error the
 * first line at which a prefix of the document fails the same way is reported as "near line N". A key
 * written twice in one mapping, which Bun's parser takes silently (the last wins, and whatever was
 * under the first is lost), is an error at that key's path naming both lines (duplicate-keys.ts).
 * @throws ConfigError with one issue at {@link ROOT_PATH}, or one per repeated key.
 */
export function parseYaml(text: string, file?: string): unknown {
  try {
    const doc = Bun.YAML.parse(text);
    const twice = duplicateKeys(text);
    if (twice.length > 0) {
      throw new ConfigError(
        twice.map((d) => ({
          path: formatPath(d.path),
          message: `"${d.key}" is written twice in the same mapping (lines ${d.first} and ${d.second}); YAML keeps only the last, so everything under line ${d.first} would be lost: write it once${d.path.length === 1 ? " (merge the two blocks)" : ""}`,
        })),
        file,
      );
    }
    return doc;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    if (e instanceof RangeError) {
      // Bun's parser recurses: past ~4,000 levels of mappings or lists it runs out of stack (Bun 1.4.5).
      // Not a syntax error, and no line to find (each prefix tried would run out the same way).
      throw new ConfigError([{ path: ROOT_PATH, message: `the YAML nests mappings and lists too deeply to be read (${e.message}); combo params may nest at most ${MAX_JSON_DEPTH.toLocaleString("en-US")} levels` }], file);
    }
    const reason = String((e as Error)?.message ?? e).replace(/^YAML Parse error:\s*/i, "");
    let where = "";
    if (!/EOF/i.test(reason)) {
      const lines = text.split(/\r?\n/);
      for (let n = 1; n <= lines.length; n++) {
        try {
          Bun.YAML.parse(lines.slice(0, n).join("\n"));
        } catch (e2) {
          if (String((e2 as Error)?.message ?? e2).replace(/^YAML Parse error:\s*/i, "") === reason) {
            where = ` near line ${n}`;
            break;
          }
        }
      }
    }
    throw new ConfigError([{ path: ROOT_PATH, message: `YAML syntax error${where}: ${reason}` }], file);
  }
}

/**
 * Parses and validates configuration text (SPEC 2.3) into a {@link RuntimeConfig}: defaults applied,
 * secrets resolved, built-in providers merged, cross-references checked (see the module doc).
 * An empty document is valid: the built-in providers and defaults, no accounts.
 * @throws ConfigError listing every problem, each with its path; no message contains a secret.
 */
export function parseConfig(text: string, opts: ParseOptions = {}): RuntimeConfig {
  const doc = parseYaml(text, opts.path);
  try {
    return parseConfigDocument(doc, opts);
  } catch (e) {
    throw e instanceof ConfigError ? withLines(e, text) : e;
  }
}

/**
 * {@link parseConfig} for a document already parsed from YAML (or assembled, as src/config/compose.ts
 * does with the objects created through the admin API).
 * @throws ConfigError listing every problem, each with its path.
 */
export function parseConfigDocument(doc: unknown, opts: ParseOptions = {}): RuntimeConfig {
  const env = opts.env ?? process.env;
  const baseDir = opts.baseDir ?? process.cwd();
  const parsed = v.safeParse(ConfigFileSchema, doc ?? {}, { abortEarly: false, message: () => DEFAULT_MESSAGE });
  if (!parsed.success) throw new ConfigError(parsed.issues.map(issueFromValibot), opts.path);
  return build(parsed.output, { env, baseDir, path: opts.path, loadedAt: (opts.now ?? Date.now)(), databaseFlag: opts.databaseFlag });
}

interface BuildContext {
  env: Env;
  baseDir: string;
  path?: string;
  loadedAt: number;
  databaseFlag?: boolean;
}

const quoteNames = (xs: Iterable<string>) => [...xs].map((x) => `"${x}"`).join(", ") || "none";

/** The semantic half of loading: secrets, built-ins, cross-references. */
function build(file: ConfigFile, ctx: BuildContext): RuntimeConfig {
  const issues: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const add = (at: PathSegment[], message: string) => issues.push({ path: formatPath(at), message });
  const warn = (at: PathSegment[], message: string) => warnings.push({ path: formatPath(at), message });
  const secret = (raw: string, at: PathSegment[]): { value: string; via: string } | undefined => {
    const r = resolveSecret(raw, ctx);
    if (r.ok) return r;
    add(at, r.message);
    return undefined;
  };

  // ----- server ----------------------------------------------------------------------------
  const server: ServerConfig = {
    host: file.server.host,
    port: file.server.port,
    requireApiKey: file.server.require_api_key || envFlag(ctx.env.REQUIRE_API_KEY),
    maxBodyBytes: file.server.max_body_bytes,
    bodyTimeoutMs: file.server.body_timeout_ms,
    keepAliveTimeoutMs: file.server.keep_alive_timeout_ms,
    websocketIdleTimeoutMs: file.server.websocket_idle_timeout_ms,
    shutdownGraceMs: file.server.shutdown_grace_ms,
    allowedHosts: file.server.allowed_hosts,
    corsOrigins: [...new Set(file.server.cors_origins)],
  };
  if (file.server.instance_name !== undefined) server.instanceName = file.server.instance_name;
  if (file.server.database !== undefined) {
    const r = resolveSecret(file.server.database, ctx);
    if (r.ok) server.database = r.value;
    else if (ctx.databaseFlag) warn(["server", "database"], `${r.message}; the --database given to start is used`);
    else add(["server", "database"], r.message);
  }

  // ----- providers -------------------------------------------------------------------------
  const providers = buildProviders(file.providers, add, warn);
  // Providers that failed their own checks still count as known, so references to them do not cascade.
  const knownProviderIds = new Set([...providers.keys(), ...file.providers.map((p) => p.id)]);
  /** The models the file lists for each of its providers that lists any (`providers[].models` keys). */
  const fileModels = new Map(file.providers.flatMap((p) => (p.models && Object.keys(p.models).length > 0 ? [[p.id, Object.keys(p.models)] as const] : [])));

  // ----- accounts --------------------------------------------------------------------------
  const accounts: Account[] = [];
  const accountAt = new Map<string, number>();
  const accountProvider = new Map<string, string>();
  file.accounts.forEach((a, i) => {
    const at: PathSegment[] = ["accounts", i];
    const prev = accountAt.get(a.id);
    if (prev !== undefined) return add([...at, "id"], `duplicate account id "${a.id}" (first at accounts[${prev}])`);
    accountAt.set(a.id, i);
    accountProvider.set(a.id, a.provider);
    const prov = providers.get(a.provider);
    if (!prov && !knownProviderIds.has(a.provider)) {
      const hint = suggest(a.provider, [...knownProviderIds]);
      add([...at, "provider"], `unknown provider "${a.provider}"${hint ? ` (did you mean "${hint}"?)` : ""}; known: ${quoteNames(knownProviderIds)}`);
    }
    // Credential shape.
    const both = a.api_key !== undefined && a.access_token !== undefined;
    if (both) add([...at, "access_token"], "give either api_key or access_token, not both");
    if (a.access_token === undefined) {
      for (const k of ["refresh_token", "expires_at", "account_id"] as const) {
        if (a[k] !== undefined) add([...at, k], `${k} only goes with access_token`);
      }
    }
    if (prov && !both) {
      const sub = isSubscriptionKind(prov.kind);
      if (sub && a.api_key !== undefined) {
        add([...at, "api_key"], `provider "${prov.id}" is a subscription provider (${prov.kind}): use access_token (or \`switchyard login\`)`);
      } else if (sub && a.access_token === undefined) {
        add(
          [...at, "access_token"],
          `required for subscription provider "${prov.id}" (${prov.kind}); accounts from \`switchyard login\`/\`import\` live in the database instead`,
        );
      } else if (!sub && a.access_token !== undefined) {
        add([...at, "access_token"], `access_token is for subscription providers (claude-code, codex); provider "${prov.id}" (${prov.kind}) takes api_key`);
      } else if (!sub && a.api_key === undefined && !KIND_TRAITS[prov.kind].thirdParty) {
        add([...at, "api_key"], `required for provider "${prov.id}" (${prov.kind})`);
      }
    }
    // Secrets (resolved even when something else is wrong, so every missing variable is reported).
    let credential: Credential = { type: "none" };
    if (a.api_key !== undefined) {
      const s = secret(a.api_key, [...at, "api_key"]);
      if (s) credential = { type: "api_key", apiKey: s.value };
    } else if (a.access_token !== undefined) {
      const s = secret(a.access_token, [...at, "access_token"]);
      const r = a.refresh_token !== undefined ? secret(a.refresh_token, [...at, "refresh_token"]) : undefined;
      if (s) {
        credential = { type: "oauth", accessToken: s.value };
        if (r) credential.refreshToken = r.value;
        if (a.expires_at !== undefined) credential.expiresAt = a.expires_at;
        if (a.account_id !== undefined) credential.accountId = a.account_id;
      }
    }
    let proxy: string | undefined;
    if (a.proxy !== undefined) {
      const s = secret(a.proxy, [...at, "proxy"]);
      if (s) {
        if (isHttpUrl(s.value)) proxy = s.value;
        else add([...at, "proxy"], `proxy (${s.via === "inline value" ? "as written" : `from ${s.via}`}) must be an http:// or https:// URL`);
      }
    }
    const acc: Account = {
      id: a.id,
      providerId: a.provider,
      priority: a.priority ?? i + 1,
      credential,
      disabled: a.disabled,
      source: "config",
    };
    if (a.max_concurrency !== undefined) acc.maxConcurrency = a.max_concurrency;
    if (proxy !== undefined) acc.proxy = proxy;
    accounts.push(acc);
  });

  // ----- keys ------------------------------------------------------------------------------
  const keys: ConfigKey[] = [];
  const keyAt = new Map<string, number>();
  const secretAt = new Map<string, number>();
  file.keys.forEach((k, i) => {
    const at: PathSegment[] = ["keys", i];
    const prev = keyAt.get(k.name);
    if (prev !== undefined) return add([...at, "name"], `duplicate key name "${k.name}" (first at keys[${prev}])`);
    keyAt.set(k.name, i);
    const s = secret(k.key, [...at, "key"]);
    if (!s) return;
    const same = secretAt.get(s.value);
    if (same !== undefined) return add([...at, "key"], `same secret as keys[${same}]; every key needs its own`);
    secretAt.set(s.value, i);
    // Bearer keys are never throttled (only the dashboard's sign-in form is), so a short key is a
    // guessable password from the network. A warning, not an error: refusing would stop existing setups.
    if (s.value.length < MIN_KEY_LENGTH) {
      warn(
        [...at, "key"],
        `key "${k.name}"${k.scopes.includes("admin") ? " (admin scope)" : ""} is ${s.value.length} characters long, under ${MIN_KEY_LENGTH}: wrong keys are never throttled, so from the network a short key can be guessed; give it at least ${MIN_KEY_LENGTH} random characters (switchyard keys create makes 46-character keys: sy- and 43 random characters)`,
      );
    }
    const key: ConfigKey = { name: k.name, secret: s.value, scopes: k.scopes, source: "config" };
    if (k.tag !== undefined) key.tag = k.tag;
    if (k.limits !== undefined) key.limits = keyLimits(k.limits);
    // A `provider/*` pattern names a provider as a target does: an unknown one is an error (the pattern
    // would allow nothing), as `keys create` and POST /admin/api/keys refuse it.
    k.limits?.models?.forEach((m, j) => {
      if (!m.endsWith("/*") || knownProviderIds.has(m.slice(0, -2))) return;
      const providerId = m.slice(0, -2);
      const hint = suggest(providerId, [...knownProviderIds]);
      add(
        [...at, "limits", "models", j],
        `unknown provider "${providerId}" in "${m}"${hint ? ` (did you mean "${hint}"?)` : ""}: the pattern would allow no model; known providers: ${quoteNames(knownProviderIds)}`,
      );
    });
    keys.push(key);
  });

  // ----- combos and aliases: names ---------------------------------------------------------
  const comboAt = new Map<string, number>();
  file.combos.forEach((c, i) => {
    const prev = comboAt.get(c.name);
    if (prev !== undefined) add(["combos", i, "name"], `duplicate combo name "${c.name}" (first at combos[${prev}])`);
    else comboAt.set(c.name, i);
  });
  const aliasNames = new Set<string>();
  for (const name of Object.keys(file.aliases)) {
    const at: PathSegment[] = ["aliases", name];
    if (!MODEL_NAME_RE.test(name)) add(at, `alias name must not be empty or contain ${MODEL_NAME_RULE}`);
    else if (comboAt.has(name)) {
      // SPEC R-2: a name is looked up as an alias before a combo, so this is allowed; say what it does.
      warn(at, `alias "${name}" shadows combo combos[${comboAt.get(name)}] of the same name: "${name}" resolves to the alias (aliases are looked up before combos); the combo cannot be reached by that name`);
    }
    aliasNames.add(name);
  }
  // Names a person cannot tell apart (case, Unicode NFC): they route apart, so a warning, not an error.
  const seenNames: string[] = [];
  const lookalikeWarn = (at: PathSegment[], kind: string, name: string) => {
    const twin = lookalikeOf(name, seenNames);
    if (twin) warn(at, `${kind} name ${JSON.stringify(name)} ${lookalikeClause(twin.why, `the ${comboAt.has(twin.name) ? "combo" : "alias"} ${JSON.stringify(twin.name)}`)}; rename one`);
    seenNames.push(name);
  };
  for (const [name, i] of comboAt) lookalikeWarn(["combos", i, "name"], "combo", name);
  for (const name of aliasNames) if (!comboAt.has(name)) lookalikeWarn(["aliases", name], "alias", name);

  /** Checks a reference to a model, alias or combo. */
  const checkRef = (target: string, at: PathSegment[]): TargetRef | undefined => {
    const slash = target.indexOf("/");
    if (slash >= 0) {
      const providerId = target.slice(0, slash);
      const model = target.slice(slash + 1);
      if (!knownProviderIds.has(providerId)) {
        const hint = suggest(providerId, [...knownProviderIds]);
        add(at, `unknown provider "${providerId}" in "${target}"${hint ? ` (did you mean "${hint}"?)` : ""}; known providers: ${quoteNames(knownProviderIds)}`);
        return undefined;
      }
      if (model.trim() === "") {
        add(at, `"${target}" names no model after "${providerId}/"`);
        return undefined;
      }
      // A provider whose file lists its models: a name not among them is sent as written (the list is
      // metadata, and an upstream may serve more), but it is usually a typo, which only the upstream's 404
      // would show (newuser13's tryout, J5; `setup --model` refuses it for the same reason).
      const listed = fileModels.get(providerId);
      if (listed && listed.length > 0 && !listed.includes(model) && !model.includes("*")) {
        const hint = suggest(model, listed);
        warn(at, `provider "${providerId}" lists its models (${quoteNames(listed.slice(0, 8))}${listed.length > 8 ? `, … ${listed.length - 8} more` : ""}) and "${model}" is not one of them${hint ? ` (did you mean "${hint}"?)` : ""}: it is sent to the upstream as written; add it under providers[].models if it is right`);
      }
      return { type: "model", providerId, model };
    }
    if (aliasNames.has(target)) return { type: "alias", name: target };
    if (comboAt.has(target)) return { type: "combo", name: target };
    const hint = suggest(target, [...aliasNames, ...comboAt.keys()]);
    add(
      at,
      `"${target}" is neither provider/model, an alias nor a combo${hint ? ` (did you mean "${hint}"?)` : ""}; write e.g. "openai/${target}"`,
    );
    return undefined;
  };

  // ----- reference graph for cycle detection ------------------------------------------------
  type Node = string; // "combo:NAME" | "alias:NAME"
  const edges = new Map<Node, { to: Node; at: PathSegment[] }[]>();
  const edge = (from: Node, ref: TargetRef | undefined, at: PathSegment[]) => {
    if (!ref || ref.type === "model") return;
    const to = `${ref.type}:${ref.name}`;
    if (!edges.has(from)) edges.set(from, []);
    edges.get(from)!.push({ to, at });
  };

  // ----- combos ----------------------------------------------------------------------------
  const combos = new Map<string, Combo>();
  file.combos.forEach((c, i) => {
    const strategy = c.strategy === "priority" ? "fallback" : c.strategy;
    const targets: ComboTarget[] = [];
    c.targets.forEach((t, j) => {
      const at: PathSegment[] = ["combos", i, "targets", j];
      const ref = checkRef(t.model, [...at, "model"]);
      edge(`combo:${c.name}`, ref, [...at, "model"]);
      if (t.account !== undefined) {
        const accProvider = accountProvider.get(t.account);
        if (accProvider === undefined) {
          const hint = suggest(t.account, [...accountProvider.keys()]);
          add([...at, "account"], `unknown account "${t.account}"${hint ? ` (did you mean "${hint}"?)` : ""}`);
        } else if (ref && ref.type !== "model") {
          add([...at, "account"], `an account can only pin a provider/model target; "${t.model}" is ${ref.type === "alias" ? "an alias" : "a combo"}`);
        } else if (ref && ref.providerId !== accProvider) {
          add([...at, "account"], `account "${t.account}" belongs to provider "${accProvider}", not "${ref.providerId}"`);
        }
      }
      if (t.weight !== undefined && strategy !== "weighted") {
        warn([...at, "weight"], `ignored: combo "${c.name}" uses strategy ${strategy}, not weighted`);
      }
      if (!ref) return;
      const target: ComboTarget = { model: t.model, ref, weight: t.weight ?? 1 };
      if (t.account !== undefined) target.account = t.account;
      if (t.params !== undefined) target.params = t.params;
      if (t.when !== undefined) target.when = { expr: t.when.expr, whenUnknown: t.when.when_unknown };
      targets.push(target);
    });
    if (comboAt.get(c.name) !== i) return; // duplicate, already reported
    combos.set(c.name, {
      name: c.name,
      strategy,
      portability: c.portability,
      cacheAffinity: c.cache_affinity,
      targets,
      source: "config",
    });
  });

  // ----- aliases ---------------------------------------------------------------------------
  const aliases = new Map<string, string>();
  for (const [name, target] of Object.entries(file.aliases)) {
    const ref = checkRef(target, ["aliases", name]);
    edge(`alias:${name}`, ref, ["aliases", name]);
    aliases.set(name, target);
  }

  // ----- cycles ----------------------------------------------------------------------------
  const state = new Map<Node, 1 | 2>();
  const stack: Node[] = [];
  /** The reference each node of `stack` after the first was reached by. */
  const via: PathSegment[][] = [];
  const cycles: ReferenceCycle[] = [];
  const display = (n: Node) => n.slice(n.indexOf(":") + 1);
  const dfs = (n: Node, reachedBy: PathSegment[]) => {
    state.set(n, 1);
    stack.push(n);
    via.push(reachedBy);
    for (const e of edges.get(n) ?? []) {
      const s = state.get(e.to);
      if (s === 1) {
        const k = stack.indexOf(e.to);
        // each member with its own reference in the cycle: the one that reached the next member, the last's is e
        const members = stack.slice(k).map((m, j) => ({ name: display(m), path: formatPath(k + j + 1 < stack.length ? via[k + j + 1] : e.at) }));
        add(e.at, cycleMessage(members));
        cycles.push({ path: formatPath(e.at), members });
      } else if (s === undefined) dfs(e.to, e.at);
    }
    stack.pop();
    via.pop();
    state.set(n, 2);
  };
  for (const c of file.combos) if (!state.has(`combo:${c.name}`)) dfs(`combo:${c.name}`, []);
  for (const a of Object.keys(file.aliases)) if (!state.has(`alias:${a}`)) dfs(`alias:${a}`, []);

  // ----- settings --------------------------------------------------------------------------
  const s = file.settings;
  const ca = s.capacity_adapter;
  for (const kind of ["images", "pdf", "audio", "video"] as const) {
    ca[kind].forEach((m, j) => {
      const at: PathSegment[] = ["settings", "capacity_adapter", kind, j];
      const slash = m.indexOf("/");
      if (slash < 0) add(at, `"${m}" must be provider/model (e.g. "openai/${m}")`);
      else checkRef(m, at);
    });
  }
  // A pricing key is provider/model, a bare model id, or provider/* for every model of a provider of
  // this gateway: any other "*" is a name no model has, and was accepted while pricing nothing.
  for (const name of Object.keys(s.pricing)) {
    if (!name.includes("*")) continue;
    const providerId = name.endsWith("/*") ? name.slice(0, -2) : undefined;
    if (providerId !== undefined && !providerId.includes("*") && !providerId.includes("/") && knownProviderIds.has(providerId)) continue;
    if (providerId !== undefined && !providerId.includes("*") && !providerId.includes("/")) {
      const hint = suggest(providerId, [...knownProviderIds]);
      add(["settings", "pricing", name], `unknown provider "${providerId}" in "${name}"${hint ? ` (did you mean "${hint}"?)` : ""}: the pattern would price no model; known providers: ${quoteNames(knownProviderIds)}`);
    } else {
      add(["settings", "pricing", name], `"${name}" is no model name: a pricing key is provider/model, a bare model id, or provider/* for every model of a provider (the only pattern)`);
    }
  }
  const settings: Settings = {
    accountStrategy: s.account_strategy,
    tokenSavers: { compressToolResults: s.token_savers.compress_tool_results },
    redaction: { enabled: s.redaction.enabled },
    capacityAdapter: { images: ca.images, pdf: ca.pdf, audio: ca.audio, video: ca.video },
    maxAttempts: s.max_attempts,
    precommitDeadlineMs: s.precommit_deadline_ms,
    traceRingSize: s.trace_ring_size,
    ...(s.usage_retention_days !== undefined ? { usageRetentionDays: s.usage_retention_days } : {}),
    alerts: { quotaThresholds: [...new Set(s.alerts.quota_thresholds)].sort((a, b) => a - b) },
    pricing: new Map(
      Object.entries(s.pricing).map(([model, p]) => [
        model,
        {
          input: p.input,
          output: p.output,
          ...(p.cache_read !== undefined ? { cacheRead: p.cache_read } : {}),
          ...(p.cache_write !== undefined ? { cacheWrite: p.cache_write } : {}),
          ...(p.web_searches !== undefined ? { webSearches: p.web_searches } : {}),
        },
      ]),
    ),
    flightRecorder: { enabled: s.flight_recorder.enabled, maxRequests: s.flight_recorder.max_requests, maxBodyBytes: s.flight_recorder.max_body_bytes },
  };
  if (s.alerts.webhook !== undefined) {
    const hook = secret(s.alerts.webhook, ["settings", "alerts", "webhook"]);
    if (hook) {
      let ok = false;
      try {
        const u = new URL(hook.value);
        ok = u.protocol === "http:" || u.protocol === "https:";
      } catch {
        ok = false;
      }
      if (ok) settings.alerts.webhook = hook.value;
      else add(["settings", "alerts", "webhook"], "must be an http:// or https:// URL");
    }
  }

  if (issues.length > 0) throw new ConfigError(issues, ctx.path, cycles);
  // A combo that reaches one target twice (nested combos): each request tries it once (pipeline/order.ts
  // step 5), which the file does not show; said so, as a warning (a power user's chain planned one model
  // on one account three times).
  const table = { providers, aliases, combos: combos as never };
  for (const [name, i] of comboAt) {
    for (const r of comboRepeats(name, table)) {
      warn(["combos", i, "targets", r.again], `combo "${name}" reaches ${r.subject} again (first through targets[${r.first}]): a request tries it once, at its first position`);
    }
  }
  return {
    server,
    providers,
    accounts,
    combos,
    aliases,
    keys,
    settings,
    warnings,
    source: { ...(ctx.path ? { path: ctx.path } : {}), loadedAt: ctx.loadedAt },
  };
}

/** `keys[].limits` as written (valibot output) → the runtime {@link KeyLimits}; only the fields given. */
export function keyLimits(l: v.InferOutput<typeof KeyLimitsSchema>): KeyLimits {
  const out: KeyLimits = {};
  if (l.rpm !== undefined) out.rpm = l.rpm;
  if (l.tpm !== undefined) out.tpm = l.tpm;
  if (l.concurrency !== undefined) out.concurrency = l.concurrency;
  if (l.budgets !== undefined) out.budgets = l.budgets.map((b) => (b.tokens !== undefined ? { window: b.window, tokens: b.tokens } : { window: b.window, usd: b.usd! }));
  if (l.models !== undefined) out.models = l.models;
  return out;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * Reads and parses a configuration file (sync). `file:` secrets are relative to the file's folder.
 * `databaseFlag`: as {@link ParseOptions.databaseFlag}.
 * @throws ConfigError (at {@link ROOT_PATH} when the file cannot be read), or as {@link parseConfig}.
 */
export function loadConfigFile(path: string, env: Env = process.env, databaseFlag = false): RuntimeConfig {
  const abs = resolve(path);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "not found" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
    throw new ConfigError([{ path: ROOT_PATH, message: `cannot read config file ${abs}: ${why}` }], abs);
  }
  return parseConfig(text, { baseDir: dirname(abs), env, path: abs, databaseFlag });
}

/**
 * The configuration used when there is no config file: the built-in providers, defaults, and one
 * account per API key in the environment (ANTHROPIC_API_KEY → `anthropic-env`, OPENAI_API_KEY →
 * `openai-env`, GEMINI_API_KEY → `gemini-env`; empty values are ignored). REQUIRE_API_KEY applies.
 */
export function defaultConfig(env: Env = process.env, now: () => number = Date.now): RuntimeConfig {
  return addEnvAccounts(parseConfig("", { env, now }), env);
}

/**
 * The keys README and `switchyard setup` tell a client to send to switchyard when the gateway needs
 * none ({@link CLIENT_KEY_PLACEHOLDERS}, pipeline/scrub.ts), and the prefix of switchyard's own client
 * keys (`sy-`, src/store/secrets.ts). README has the user export them as ANTHROPIC_API_KEY /
 * GEMINI_API_KEY for the client; a gateway started from the same shell must not take them for the
 * provider's key (every request on that account would be a 401 from the provider).
 */
export { CLIENT_KEY_PLACEHOLDERS };
const CLIENT_KEY_PREFIX = "sy-";

/**
 * Shortest config-file client key (`keys[].key`, characters) taken without a warning: wrong bearer keys
 * are never throttled, so a shorter one can be guessed from the network (try21's tryout). Generated keys
 * are 46 characters (src/store/secrets.ts).
 */
export const MIN_KEY_LENGTH = 20;

/**
 * Adds the `*-env` accounts of {@link defaultConfig} to a configuration built without a file. A value
 * that is a client's key for switchyard ({@link CLIENT_KEY_PLACEHOLDERS}, or a `sy-` key) makes no
 * account: a config warning says why (logged at start).
 */
export function addEnvAccounts(cfg: RuntimeConfig, env: Env): RuntimeConfig {
  for (const e of ENV_ACCOUNTS) {
    const key = env[e.env];
    if (key === undefined || key.trim() === "") continue;
    const value = key.trim();
    if (CLIENT_KEY_PLACEHOLDERS.includes(value) || value.startsWith(CLIENT_KEY_PREFIX)) {
      const what = value.startsWith(CLIENT_KEY_PREFIX) ? "a switchyard client key (sy-…)" : `"${value}", the placeholder key clients send to switchyard`;
      cfg.warnings.push({ path: e.env, message: `${e.env} holds ${what}, not an API key of provider ${e.provider}: no account ${e.id} was made from it (unset it in the gateway's environment, or give the provider's key)` });
      continue;
    }
    cfg.accounts.push({
      id: e.id,
      providerId: e.provider,
      priority: cfg.accounts.length + 1,
      credential: { type: "api_key", apiKey: key.trim() },
      disabled: false,
      source: "config",
    });
  }
  return cfg;
}

/** Where `switchyard start` looks for a config file when `--config` is not given: `$SWITCHYARD_HOME/config.yaml`, else `~/.switchyard/config.yaml`. */
export function defaultConfigPath(env: Env = process.env): string {
  return join(env.SWITCHYARD_HOME || join(homedir(), ".switchyard"), "config.yaml");
}

/**
 * The configuration `switchyard start` runs with: the given file (which must exist), else the
 * default path when a file is there, else {@link defaultConfig}.
 * @throws ConfigError as {@link loadConfigFile}.
 */
export function loadConfig(opts: { path?: string; env?: Env; databaseFlag?: boolean } = {}): RuntimeConfig {
  const env = opts.env ?? process.env;
  if (opts.path) return loadConfigFile(opts.path, env, opts.databaseFlag);
  const fallback = defaultConfigPath(env);
  return existsSync(fallback) ? loadConfigFile(fallback, env, opts.databaseFlag) : defaultConfig(env);
}
