/**
 * A modal dialog on the native `<dialog>` (focus moves into it and is trapped by the browser,
 * Escape closes it, the page behind is inert), labelled by its title.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

export function Dialog(props: { title: string; onClose(): void; children: ComponentChildren; wide?: boolean; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current!;
    // The focused element of the document, or of the shadow root the studio is mounted in.
    const opener = (dialog.getRootNode() as Document | ShadowRoot).activeElement as HTMLElement | null;
    if (!dialog.open) dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={props.wide ? "dialog wide" : "dialog"}
      aria-labelledby={titleId}
      data-testid={props.testId}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </header>
      <div class="dialog-body">{props.children}</div>
    </dialog>
  );
}
