/**
 * An action asked for twice (Keys' Rotate and Revoke, Routing's Delete): its button opens the choice,
 * then Confirm runs it and Cancel (or Escape) closes it; a refusal is shown beside it.
 *
 * Keyboard focus follows it (newuser14 K7: the opening button was unmounted and focus fell to
 * `<body>`, so a keyboard user had to Tab from the top of the page to reach the choice): opened, focus
 * moves into it — its first field (Rotate's grace select), else Cancel for a destructive action (a
 * second Enter must not revoke or delete: WAI-ARIA APG, alertdialog, "set focus on the least
 * destructive action"), else Confirm —; Escape anywhere in it cancels; closed by Cancel, Escape or a
 * confirmed action whose button stays, focus returns to the button that opened it.
 *
 * A confirmed action that takes its button away (a revoked key's row keeps no actions, a deleted alias
 * leaves the list) dropped focus to `<body>` once the list was re-read: focus then moves to the same
 * action of the next row of the list (a table row, or an element marked `data-row`), else of the
 * previous one, else to the heading of the list's card (the page's `<h1>` when that is gone too), as
 * WAI-ARIA APG's grid and listbox patterns keep focus on a neighbour of a removed item. It moves only
 * while focus is on `<body>` (a user who moved on keeps their place), and the page says what was done
 * through the live region (announce.ts; `done`).
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { announce } from "./announce.ts";

/** What {@link ConfirmAction} is given. */
export interface ConfirmActionProps {
  /** The opening button's text ("Revoke"). */
  label: string;
  /** The confirming button's text ("Confirm revoke"). */
  confirmLabel: string;
  /** Destructive: both buttons in the danger colour, and focus opens on Cancel. */
  danger?: boolean;
  /** The opening button's tooltip. */
  title?: string;
  /** Called each time it opens (e.g. to reset a choice to its default). */
  onOpen?: () => void;
  /**
   * The action; a rejection keeps the choice open with {@link errorText}'s words beside it. What it
   * resolves to, when a string, is said through the live region ("Key ci revoked.").
   */
  run: () => Promise<string | void>;
  /** A refusal in the page's words (default: the error's message). */
  errorText?: (e: unknown) => string;
  /** The choice shown before Confirm (Rotate's grace select). */
  children?: ComponentChildren;
}

/** The opening button, or the open choice (`children`, Confirm, Cancel, a refusal) in its place. */
export function ConfirmAction(props: ConfirmActionProps) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const opener = useRef<HTMLButtonElement>(null);
  const box = useRef<HTMLSpanElement>(null);
  /** Set when it closes: focus goes back to the opening button once it is drawn again. */
  const refocus = useRef(false);
  // A layout effect: focus moves in the same task as the change is drawn, so a key pressed right
  // after (Escape) never lands on <body> in between.
  useLayoutEffect(() => {
    if (open) {
      const el = box.current;
      const first = el?.querySelector<HTMLElement>("select, input, textarea") ?? el?.querySelector<HTMLElement>(props.danger ? "[data-cancel]" : "[data-confirm]");
      first?.focus();
    } else if (refocus.current) {
      refocus.current = false;
      opener.current?.focus();
    }
  }, [open]);
  const close = () => {
    refocus.current = true;
    setOpen(false);
  };
  if (!open)
    return (
      <button
        ref={opener}
        type="button"
        title={props.title}
        class={props.danger ? "btn btn-small btn-danger" : "btn btn-small"}
        onClick={() => {
          props.onOpen?.();
          setError(undefined);
          setOpen(true);
        }}
      >
        {props.label}
      </button>
    );
  const confirm = async () => {
    setBusy(true);
    // where focus goes if the action takes this button away: read before the list changes
    const after = focusAfter(box.current, props.label);
    try {
      const said = await props.run();
      if (said) announce(said);
      close();
      after();
    } catch (e) {
      setError(props.errorText ? props.errorText(e) : (e as Error).message);
      // the busy Confirm was disabled, which drops focus: give it back
      requestAnimationFrame(() => box.current?.querySelector<HTMLElement>("[data-confirm]")?.focus());
    } finally {
      setBusy(false);
    }
  };
  return (
    <span
      ref={box}
      class="form-row confirm-action"
      role="group"
      aria-label={props.confirmLabel}
      onKeyDown={(e) => {
        if (e.key !== "Escape") return;
        e.preventDefault();
        e.stopPropagation();
        close();
      }}
    >
      {props.children}
      <button type="button" data-confirm="" class={props.danger ? "btn btn-small btn-danger" : "btn btn-small"} disabled={busy} onClick={() => void confirm()}>
        {busy ? "…" : props.confirmLabel}
      </button>
      <button type="button" data-cancel="" class="btn btn-small" onClick={close}>
        Cancel
      </button>
      {error && <span class="held-text small">{error}</span>}
    </span>
  );
}

/** How long after a confirmed action its button may still go away (the list re-read) and focus follow. */
const FOLLOW_MS = 10_000;

/**
 * Once focus has fallen to `<body>` after a confirmed action (its button removed with the row, or the
 * row's actions), moves it to `label`'s button in the next row of `box`'s list, else the previous one,
 * else the list card's heading (the page's `<h1>` when that heading is gone), made focusable
 * (`tabindex=-1`). Watches for {@link FOLLOW_MS}; a focus anywhere but `<body>` and the button itself
 * ends the watch. The rows are read now (`box` is still in its row); returns the watch's start.
 */
function focusAfter(box: HTMLElement | null, label: string): () => void {
  const row = box?.closest<HTMLElement>("tr, [data-row]") ?? null;
  const siblings = row?.parentElement ? [...row.parentElement.children] : [];
  const at = row ? siblings.indexOf(row) : -1;
  // the next rows first, then the previous ones nearest first
  const candidates = at < 0 ? [] : [...siblings.slice(at + 1), ...siblings.slice(0, at).reverse()];
  // the list's card, looked for from the row's parent: a row that is itself a card (`Card row`) would
  // otherwise give its own heading, which goes with it (focus then fell to <body>)
  const heading = (row ? row.parentElement : box)?.closest(".card")?.querySelector<HTMLElement>(".card-head h2") ?? null;
  const button = box?.parentElement ?? null;
  const target = (): HTMLElement | null => {
    for (const r of candidates) {
      if (!r.isConnected) continue;
      const b = [...r.querySelectorAll<HTMLButtonElement>("button")].find((x) => x.textContent?.trim() === label && !x.disabled);
      if (b) return b;
    }
    const h = heading?.isConnected ? heading : document.querySelector<HTMLElement>("main h1");
    if (h && !h.hasAttribute("tabindex")) h.setAttribute("tabindex", "-1");
    return h;
  };
  return () => {
    const end = Date.now() + FOLLOW_MS;
    const watch = () => {
      const a = document.activeElement;
      if (!a || a === document.body) {
        target()?.focus();
        return;
      }
      // focus on something of the row's own (its button drawn again) is waited out; elsewhere, the user moved on
      if (!(button?.contains(a) || row?.contains(a)) || Date.now() > end) return;
      setTimeout(watch, 50);
    };
    setTimeout(watch, 0);
  };
}
