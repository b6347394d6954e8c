/**
 * Model discovery for subscription pools (SPEC P-6, P-8): at start and on demand, ask every healthy
 * account which models it may use, store the list per account (`store.setAccountModels`; the
 * registry then never routes a model to an account of the pool that did not advertise it), publish
 * the union under the provider prefix in GET /v1/models, and keep the reasoning metadata the provider
 * reports (efforts a model supports) from the first account, in configured order, that answered.
 *
 * Endpoints, each called with the account's own auth (the executor's headers):
 * - `claude-code`, `anthropic`: `GET {base_url}/v1/models?limit=1000` (Anthropic API "List models",
 *   paginated by `after_id`) → `{data: [{id}], has_more, last_id}`. Anthropic lists dated ids
 *   (`claude-sonnet-4-5-20250929`); the undated alias and `-latest` form of each are advertised too,
 *   since clients ask for those.
 * - `codex`: `GET {base_url}/models?client_version=…` (the Codex CLI's model catalogue on the
 *   ChatGPT backend, codex-rs models endpoint) → `{models: [{slug, supported_reasoning_levels:
 *   [{effort}], …}]}`.
 * - `openai`, `openai-responses`: `GET {base_url}/models` (OpenAI "List models") → `{data: [{id}]}`.
 *
 * Automatic runs cover subscription kinds only (API-key providers serve every model their docs list;
 * their accounts are discovered only when asked for by provider id). A failed discovery keeps the
 * account's previous list.
 */
import { KIND_TRAITS } from "../../formats/codec.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";
import type { UpstreamCall } from "../../pipeline/index.ts";
import { claudeCodeHeaders } from "./claude-code.ts";
import { CODEX_DEFAULT_ORIGINATOR } from "./codex.ts";
import { headersFor, joinUrl, type CredentialSource } from "./index.ts";
import type { Store } from "../store/types.ts";

/** Client version sent to the Codex model catalogue (it hides models newer clients need); the recorded Codex CLI's. */
export const CODEX_CLIENT_VERSION = "0.171.0";
/** One discovery call may take this long, ms. */
export const DISCOVERY_TIMEOUT_MS = 10_000;
const DISCOVERABLE_KINDS = new Set(["claude-code", "codex", "anthropic", "openai", "openai-responses"]);

/** One account's discovery. */
export interface DiscoveryResult {
  accountId: string;
  providerId: string;
  ok: boolean;
  /** Models advertised (when ok). */
  models?: string[];
  /** Why it failed (never a token). */
  error?: string;
}

/** What discovery needs. */
export interface DiscoveryDeps {
  store: Pick<Store, "setAccountModels">;
  /** Every account, in configured (priority) order. */
  accounts(): Account[];
  providers(): Map<string, ProviderInfo>;
  /** Whether an account may be asked (not disabled, quarantined or locked). */
  healthy(account: Account): boolean;
  credentials?: CredentialSource;
  /** Re-reads accounts into the live registry after new lists were stored. */
  reload(): void | Promise<void>;
  fetchImpl?: typeof fetch;
  clock: Clock;
  log?: (line: string) => void;
  timeoutMs?: number;
}

/** Models and their reasoning metadata, per provider. */
export class Discovery {
  /** providerId → model → reasoning efforts, from the first account (configured order) that reported them. */
  private readonly meta = new Map<string, Map<string, string[]>>();
  private running: Promise<DiscoveryResult[]> | undefined;

  constructor(private readonly deps: DiscoveryDeps) {}

  /**
   * Discovers the models of every healthy account of the subscription providers, or of one provider
   * or account when asked. Concurrent calls without a filter share one run.
   */
  async run(filter: { providerId?: string; accountId?: string } = {}): Promise<DiscoveryResult[]> {
    if (!filter.providerId && !filter.accountId) {
      this.running ??= this.runNow(filter).finally(() => (this.running = undefined));
      return this.running;
    }
    return this.runNow(filter);
  }

  private async runNow(filter: { providerId?: string; accountId?: string }): Promise<DiscoveryResult[]> {
    const providers = this.deps.providers();
    const explicit = Boolean(filter.providerId || filter.accountId);
    const accounts = this.deps.accounts().filter((a) => {
      const p = providers.get(a.providerId);
      if (!p || !DISCOVERABLE_KINDS.has(p.kind)) return false;
      if (filter.providerId && a.providerId !== filter.providerId) return false;
      if (filter.accountId && a.id !== filter.accountId) return false;
      return explicit || KIND_TRAITS[p.kind].subscription;
    });
    const results = await Promise.all(accounts.map((a) => this.discoverOne(a, providers.get(a.providerId)!)));
    // SPEC P-8: metadata from the first successful account in configured order.
    const seen = new Set<string>();
    for (let i = 0; i < accounts.length; i++) {
      const r = results[i].result;
      if (!r.ok || seen.has(r.providerId)) continue;
      seen.add(r.providerId);
      this.meta.set(r.providerId, results[i].efforts);
    }
    let stored = false;
    for (const { result } of results) {
      if (!result.ok || !result.models) continue;
      try {
        await this.deps.store.setAccountModels(result.accountId, result.models);
        stored = true;
      } catch (e) {
        result.ok = false;
        result.error = "the model list could not be stored";
      }
    }
    if (stored) await this.deps.reload();
    for (const { result } of results) {
      this.log(result.ok ? "info" : "warn", "model discovery", { account: result.accountId, provider: result.providerId, models: result.models?.length, error: result.error });
    }
    return results.map((r) => r.result);
  }

  /**
   * The union of the models the provider's accounts advertised, sorted; empty when none was
   * discovered (published under the provider prefix in GET /v1/models).
   */
  published(providerId: string): string[] {
    const out = new Set<string>();
    for (const a of this.deps.accounts()) if (a.providerId === providerId) for (const m of a.models ?? []) out.add(m);
    return [...out].sort();
  }

  /** Every provider's published models (see {@link published}). */
  publishedAll(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (const id of this.deps.providers().keys()) {
      const list = this.published(id);
      if (list.length > 0) m.set(id, list);
    }
    return m;
  }

  /** Reasoning efforts a model supports as discovered (SPEC P-8); undefined when not reported. */
  efforts(providerId: string, model: string): string[] | undefined {
    return this.meta.get(providerId)?.get(model);
  }

  private async discoverOne(account: Account, provider: ProviderInfo): Promise<{ result: DiscoveryResult; efforts: Map<string, string[]> }> {
    const result: DiscoveryResult = { accountId: account.id, providerId: provider.id, ok: false };
    const listed = await this.list(account, provider);
    if (listed.models) {
      result.ok = true;
      result.models = listed.models;
    } else result.error = listed.error;
    return { result, efforts: listed.efforts };
  }

  /**
   * The models `account` may use as its upstream lists them now, sorted, without storing them (routing
   * is unchanged): the account test's offer when nothing configured names a model. Every kind is asked,
   * `*-compatible` and `gemini` ones too (which {@link run} leaves out, since a stored list limits
   * routing): an OpenAI-format provider's `GET {base_url}/models`, an Anthropic-format one's
   * `GET {base_url}/v1/models`, Gemini's `GET {base_url}/v1beta/models` (`{models: [{name:
   * "models/ID"}]}`, Gemini API "models.list"). `error` says why none came (never a token).
   */
  async advertised(account: Account, provider: ProviderInfo): Promise<{ models?: string[]; error?: string }> {
    const { models, error } = await this.list(account, provider);
    return models ? { models } : { error };
  }

  private async list(account: Account, provider: ProviderInfo): Promise<{ models?: string[]; error?: string; efforts: Map<string, string[]> }> {
    const efforts = new Map<string, string[]>();
    if (!this.deps.healthy(account)) return { error: "account is not healthy (disabled, quarantined or locked)", efforts };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.deps.timeoutMs ?? DISCOVERY_TIMEOUT_MS);
    try {
      let acct = account;
      if (this.deps.credentials && account.credential.type === "oauth") {
        const credential = await this.deps.credentials.ensureFresh(account, controller.signal);
        // The refresh waited on may have quarantined the credential, or failed with the token expired: nothing is asked with it.
        if (!this.deps.healthy(account)) return { error: "account is not healthy (disabled, quarantined or locked)", efforts };
        if (this.deps.credentials.expired?.(credential)) return { error: "the access token expired and could not be refreshed", efforts };
        if (credential !== account.credential) acct = { ...account, credential };
      }
      const models = new Set<string>();
      if (provider.kind === "codex") {
        const url = `${joinUrl(provider.baseUrl, "/models")}?client_version=${encodeURIComponent(CODEX_CLIENT_VERSION)}`;
        const headers = this.headers(acct, provider, "openai-responses");
        if (!headers.has("originator")) headers.set("originator", CODEX_DEFAULT_ORIGINATOR);
        const json = await this.get(url, headers, acct, controller.signal);
        for (const m of arrayOf(json, "models")) {
          const slug = str(m.slug) ?? str(m.id);
          if (!slug) continue;
          models.add(slug);
          const levels = Array.isArray(m.supported_reasoning_levels) ? m.supported_reasoning_levels : undefined;
          if (levels) efforts.set(slug, levels.map((l: unknown) => (typeof l === "string" ? l : str((l as { effort?: unknown })?.effort))).filter((x): x is string => Boolean(x)));
        }
        for (const m of arrayOf(json, "data")) if (str(m.id)) models.add(str(m.id)!);
      } else if (provider.format === "anthropic-messages") {
        let after: string | undefined;
        for (let page = 0; page < 10; page++) {
          const url = `${joinUrl(provider.baseUrl, "/v1/models")}?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ""}`;
          const headers = this.headers(acct, provider, "anthropic-messages");
          if (provider.kind === "claude-code") claudeCodeHeaders(headers);
          const json = (await this.get(url, headers, acct, controller.signal)) as { has_more?: unknown; last_id?: unknown };
          for (const m of arrayOf(json, "data")) {
            const id = str(m.id);
            if (!id) continue;
            models.add(id);
            const dated = /^(.*)-(\d{8})$/.exec(id);
            if (dated) {
              models.add(dated[1]);
              models.add(`${dated[1]}-latest`);
            }
          }
          if (json.has_more !== true || typeof json.last_id !== "string") break;
          after = json.last_id;
        }
      } else if (provider.format === "gemini") {
        let token: string | undefined;
        for (let page = 0; page < 10; page++) {
          const url = `${joinUrl(provider.baseUrl, "/v1beta/models")}?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`;
          const json = (await this.get(url, this.headers(acct, provider, "gemini"), acct, controller.signal)) as { nextPageToken?: unknown };
          for (const m of arrayOf(json, "models")) if (str(m.name)) models.add(str(m.name)!.replace(/^models\//, ""));
          // an OpenAI-shaped list from a Gemini-format server that has one
          for (const m of arrayOf(json, "data")) if (str(m.id)) models.add(str(m.id)!);
          if (typeof json.nextPageToken !== "string" || !json.nextPageToken) break;
          token = json.nextPageToken;
        }
      } else {
        const json = await this.get(joinUrl(provider.baseUrl, "/models"), this.headers(acct, provider, "openai-chat"), acct, controller.signal);
        for (const m of arrayOf(json, "data")) if (str(m.id)) models.add(str(m.id)!);
      }
      if (models.size === 0) throw new Error("the provider listed no models");
      return { models: [...models].sort(), efforts };
    } catch (e) {
      return { error: controller.signal.aborted ? "timed out" : e instanceof Error ? e.message.slice(0, 200) : "failed", efforts };
    } finally {
      clearTimeout(timer);
    }
  }

  private headers(account: Account, provider: ProviderInfo, format: UpstreamCall["upstreamFormat"]): Headers {
    const call: UpstreamCall = {
      provider,
      account,
      model: "",
      body: "",
      stream: false,
      upstreamFormat: format,
      clientFormat: format,
      clientHeaders: new Headers(),
      signal: new AbortController().signal,
    };
    const h = headersFor(call, undefined);
    h.delete("content-type");
    h.set("accept", "application/json");
    return h;
  }

  private async get(url: string, headers: Headers, account: Account, signal: AbortSignal): Promise<unknown> {
    const init: RequestInit & { proxy?: string } = { method: "GET", headers, signal, redirect: "manual" };
    if (account.proxy) init.proxy = account.proxy;
    const res = await (this.deps.fetchImpl ?? fetch)(url, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`the models endpoint answered ${res.status}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new Error("the models endpoint answered with something that is not JSON");
    }
  }

  private log(level: string, msg: string, fields: Record<string, unknown>): void {
    this.deps.log?.(JSON.stringify({ level, time: this.deps.clock.now(), msg, ...fields }));
  }
}

function arrayOf(json: unknown, key: string): Array<Record<string, any>> {
  const v = (json as Record<string, unknown> | null)?.[key];
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === "object") as Array<Record<string, any>>) : [];
}

const str = (x: unknown): string | undefined => (typeof x === "string" && x ? x : undefined);
