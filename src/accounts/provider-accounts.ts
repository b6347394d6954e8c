/**
 * The account registry's index of who serves what (SPEC, P-6): every account in priority
 * order, the accounts of each provider, the implicit keyless account of a `*-compatible` provider that
 * has none (a local Ollama, LM Studio…), and the models the accounts of a provider advertise
 * (discovery). Replaced whole by each new account list ({@link ProviderAccounts.set}); the memos it
 * keeps (advertised models, the providers advertising a model, keyless accounts) last until then.
 * Holds no live state (cooldowns, locks…: registry.ts).
 */
import { KIND_TRAITS } from "../../formats/codec.ts";
import type { Account, ProviderInfo } from "../../pipeline/ports.ts";

/** The accounts of each provider, with the provider table they were set with. */
export class ProviderAccounts {
  /** Every account known (config and stored; disabled ones too), in priority order. */
  accounts: Account[] = [];
  /** The provider table in force, by provider id. */
  providers = new Map<string, ProviderInfo>();
  /** The accounts of each provider, in priority order (a request looks up one provider: O(1)). */
  private byProvider = new Map<string, Account[]>();
  private readonly implicit = new Map<string, Account>();
  private readonly advertisedBy = new Map<string, Set<string>>();
  private readonly advertisingMemo = new Map<string, string[]>();

  /** Replaces the account list (sorted here by priority, a copy) and the provider table; drops the memos. */
  set(accounts: Account[], providers: Map<string, ProviderInfo>): void {
    this.accounts = [...accounts].sort((a, b) => a.priority - b.priority);
    this.byProvider = new Map();
    for (const a of this.accounts) {
      const list = this.byProvider.get(a.providerId);
      if (list) list.push(a);
      else this.byProvider.set(a.providerId, [a]);
    }
    this.providers = providers;
    this.implicit.clear();
    this.advertisedBy.clear();
    this.advertisingMemo.clear();
  }

  /** The listed accounts of a provider in priority order (disabled ones too); empty when it has none. O(1). */
  of(providerId: string): readonly Account[] {
    return this.byProvider.get(providerId) ?? NONE;
  }

  /**
   * The accounts a request for the provider may be sent with: its listed accounts, else, for a
   * `*-compatible` provider, its keyless account ({@link implicitAccounts}); empty otherwise. O(1).
   */
  serving(providerId: string): readonly Account[] {
    const listed = this.byProvider.get(providerId);
    if (listed) return listed;
    const p = this.providers.get(providerId);
    return p && isCompatible(p) ? [this.keyless(p)] : NONE;
  }

  /**
   * The implicit accounts: for each `*-compatible` provider without any account (disabled ones count),
   * the `<provider>-keyless` account without a credential that its requests are sent with, in
   * provider-table order. The same objects the requests use (one per provider until the next
   * {@link set}), so their state reads under their ids. O(providers).
   */
  implicitAccounts(): Account[] {
    const out: Account[] = [];
    for (const p of this.providers.values()) if (!this.byProvider.has(p.id) && isCompatible(p)) out.push(this.keyless(p));
    return out;
  }

  /** The account with this id among the listed and the implicit accounts, or undefined. */
  find(id: string): { account: Account; implicit: boolean } | undefined {
    const listed = this.accounts.find((a) => a.id === id);
    if (listed) return { account: listed, implicit: false };
    const implicit = this.implicitAccounts().find((a) => a.id === id);
    return implicit && { account: implicit, implicit: true };
  }

  /** The provider id of a listed account, or undefined. O(accounts). */
  providerOf(accountId: string): string | undefined {
    return this.accounts.find((a) => a.id === accountId)?.providerId;
  }

  /** Models advertised by any account of a provider (discovery, SPEC P-6); memoised until the next {@link set}. */
  advertised(providerId: string): Set<string> {
    let set = this.advertisedBy.get(providerId);
    if (!set) {
      set = new Set();
      for (const a of this.accounts) if (a.providerId === providerId) for (const m of a.models ?? []) set.add(m);
      this.advertisedBy.set(providerId, set);
    }
    return set;
  }

  /**
   * SPEC R-2's guess: ids of the providers that have accounts and advertise exactly `model` (an
   * account's discovered models, P-6, or the provider's configured `models`), in provider-table order.
   * Memoised per model (up to 1000 models) until the next {@link set}.
   */
  advertising(model: string): string[] {
    let out = this.advertisingMemo.get(model);
    if (!out) {
      out = [];
      for (const p of this.providers.values()) {
        if (!this.hasAccounts(p.id)) continue;
        if (Object.hasOwn(p.models, model) || this.advertised(p.id).has(model)) out.push(p.id);
      }
      if (this.advertisingMemo.size > 1000) this.advertisingMemo.clear();
      this.advertisingMemo.set(model, out);
    }
    return out;
  }

  /** Whether the provider has any account (disabled ones count; a `*-compatible` provider has its keyless one). O(1). */
  hasAccounts(providerId: string): boolean {
    if (this.byProvider.has(providerId)) return true;
    const p = this.providers.get(providerId);
    return p !== undefined && isCompatible(p);
  }

  /** A `*-compatible` provider without accounts is called without a key: its one keyless account. */
  private keyless(p: ProviderInfo): Account {
    let a = this.implicit.get(p.id);
    if (!a) {
      a = { id: `${p.id}-keyless`, providerId: p.id, priority: 0, credential: { type: "none" }, disabled: false, source: "config" };
      this.implicit.set(p.id, a);
    }
    return a;
  }
}

const NONE: readonly Account[] = Object.freeze([]);

/** A `*-compatible` provider (a local Ollama, LM Studio…) may be called without an account. */
function isCompatible(p: ProviderInfo): boolean {
  return KIND_TRAITS[p.kind].thirdParty;
}
