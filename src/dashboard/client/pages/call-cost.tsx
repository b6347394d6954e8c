/**
 * A call's cost and web searches on the Calls page (SPEC 9.5). A call is `unpriced` when a model it
 * used has no price: the one that served it, or one of its failed attempts whose usage the provider
 * reported (counted since session 46); its `costUsd` then holds the part that had a price (what a USD
 * budget counted), so such a call reads "$0.024 + unpriced" (partly unpriced), never a plain figure
 * that looks complete nor "unpriced" alone, which hid the priced part (until 2026-12-08). A call's
 * server-side web searches (`usage.webSearches`, Anthropic's `web_search_requests`, a Responses
 * reply's `web_search_call` items), priced per search into its cost, are shown when there were some.
 */
import { count, usdColumn } from "../format.ts";
import type { CallRow } from "../types.ts";

/** Whether a call is partly unpriced: `unpriced`, yet with a cost above 0 for the part that had a price. */
export const partlyUnpriced = (c: CallRow): boolean => c.unpriced === true && (c.costUsd ?? 0) > 0;

/** The amounts the Cost column writes with one number of decimals (usdColumn): those of every call not wholly unpriced. */
export const columnCosts = (rows: readonly CallRow[]): Array<number | undefined> => rows.filter((c) => !c.unpriced || partlyUnpriced(c)).map((c) => c.costUsd);

const PARTLY =
  "Partly unpriced: a model this call used (the one that served it, or a failed attempt's) has no price, so its part is not counted; the amount is the part that had a price, which is what a USD budget counted";

/** The list's Cost cell: the amount (`money`: the column's formatter), "$0.024 + unpriced", or "unpriced". */
export function CostCell({ call, money }: { call: CallRow; money: (n: number | undefined) => string }) {
  if (partlyUnpriced(call)) {
    return (
      <span class="cost-partly" data-partly-unpriced="" title={PARTLY}>
        {money(call.costUsd)} <span class="muted nowrap">+ unpriced</span>
      </span>
    );
  }
  if (call.unpriced) {
    return (
      <span class="muted" title="No price is known for this model, so no cost is counted">
        unpriced
      </span>
    );
  }
  return <>{money(call.costUsd)}</>;
}

/** The call view's Cost: "$0.025 at API prices", the partly unpriced call's priced part and why, "unpriced" and why, or "–". */
export function CostText({ call }: { call: CallRow }) {
  const amount = usdColumn([call.costUsd])(call.costUsd);
  if (partlyUnpriced(call)) {
    return (
      <>
        {amount} at API prices, partly unpriced{" "}
        <span class="muted">
          (a model this call used, the one that served it or a failed attempt's, has no price, so its part is not counted; <code>settings.pricing</code> gives one)
        </span>
      </>
    );
  }
  if (call.unpriced) {
    return (
      <>
        unpriced <span class="muted">(no price is known for this model, so no cost is counted; <code>settings.pricing</code> gives one)</span>
      </>
    );
  }
  return <>{call.costUsd !== undefined ? `${amount} at API prices` : "–"}</>;
}

/** How many web searches a call made: 0 when none (or recorded before they were kept). */
export const webSearches = (u: CallRow["usage"]): number => (u.webSearches && u.webSearches > 0 ? u.webSearches : 0);

/** "2 web searches" after the list's tokens; nothing for a call without. */
export function SearchesPart({ u }: { u: CallRow["usage"] }) {
  const n = webSearches(u);
  if (n === 0) return null;
  return (
    <>
      {" "}
      <span class="muted tokens-part" data-web-searches={n} title="Server-side web searches the provider ran for this call, billed per search and priced into its cost">
        · {count(n)} {n === 1 ? "web search" : "web searches"}
      </span>
    </>
  );
}

/** The call view's "Web searches" row, when the call made some. */
export function SearchesRow({ u }: { u: CallRow["usage"] }) {
  const n = webSearches(u);
  if (n === 0) return null;
  return (
    <>
      <dt>Web searches</dt>
      <dd class="call-web-searches">
        {count(n)} <span class="muted">(the provider's server-side search tool, billed per search; priced into the cost)</span>
      </dd>
    </>
  );
}
