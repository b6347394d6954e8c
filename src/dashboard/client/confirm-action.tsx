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
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";

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
  /** The action; a rejection keeps the choice open with {@link errorText}'s words beside it. */
  run: () => Promise<void>;
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
    try {
      await props.run();
      close();
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
