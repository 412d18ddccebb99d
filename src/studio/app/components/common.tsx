/** Small shared pieces: links inside the studio, status badges, errors, JSON blocks and fields. */
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import { useStudio } from "../context.js";
import { pretty } from "../format.js";

/** A link to a studio route; plain clicks navigate in place, others (new tab, copy) work as links do. */
export function Link(props: { to: string; children: ComponentChildren; replace?: boolean; class?: string; "aria-current"?: "page" | "true"; "data-testid"?: string }) {
  const { router } = useStudio();
  const { to, replace, children } = props;
  return (
    <a
      class={props.class}
      aria-current={props["aria-current"]}
      data-testid={props["data-testid"]}
      href={router.href(to)}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        router.go(to, replace);
      }}
    >
      {children}
    </a>
  );
}

/** A run or thread status, as text with a colour (the text carries the meaning). */
export function Status(props: { status: string | null | undefined }) {
  const s = props.status ?? "unknown";
  return <span class={`status status-${s}`}>{s}</span>;
}

/** An error message in a live region. */
export function ErrorNote(props: { error: { message: string } | string | null | undefined; testId?: string }) {
  if (!props.error) return null;
  const message = typeof props.error === "string" ? props.error : props.error.message;
  return (
    <p class="error-note" role="alert" data-testid={props.testId ?? "error"}>
      {message}
    </p>
  );
}

/** A value as indented JSON, scrolling inside its box. */
export function Json(props: { value: unknown; label: string; testId?: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={props.label} data-testid={props.testId}>
      {pretty(props.value)}
    </pre>
  );
}

/** A labelled textarea for JSON (or text), with its problem shown and announced. */
export function TextField(props: {
  label: string;
  value: string;
  onInput(value: string): void;
  rows?: number;
  problem?: string | null;
  hint?: string;
  testId?: string;
  mono?: boolean;
}) {
  const id = useId();
  const hint = props.hint ? `${id}-hint` : undefined;
  const problem = props.problem ? `${id}-problem` : undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        class={props.mono === false ? "" : "mono"}
        rows={props.rows ?? 4}
        value={props.value}
        spellcheck={false}
        aria-invalid={props.problem ? true : undefined}
        aria-describedby={[hint, problem].filter(Boolean).join(" ") || undefined}
        data-testid={props.testId}
        onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
      />
      {props.hint && (
        <small id={hint} class="hint">
          {props.hint}
        </small>
      )}
      {props.problem && (
        <small id={problem} class="problem">
          {props.problem}
        </small>
      )}
    </div>
  );
}

/** A labelled single-line input. */
export function InputField(props: { label: string; value: string; onInput(value: string): void; testId?: string; placeholder?: string; type?: "text" | "number" | "search" }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        type={(props.type ?? "text") as "text"}
        value={props.value}
        placeholder={props.placeholder}
        data-testid={props.testId}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
    </div>
  );
}

/** A labelled select. */
export function SelectField(props: { label: string; value: string; options: Array<[value: string, label: string]>; onChange(value: string): void; testId?: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} data-testid={props.testId} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** "Loading…" while the first load runs. */
export function Loading(props: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {props.what}…
    </p>
  );
}

/** A box that scrolls sideways when its table is wider than the page, reachable by keyboard. */
export function TableScroll(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={props.label} tabIndex={0}>
      {props.children}
    </div>
  );
}

/** A form's submit button and a Cancel that closes its dialog. */
export function FormActions(props: { submit: string; disabled?: boolean; testId?: string; onCancel(): void }) {
  return (
    <div class="actions">
      <button type="submit" disabled={props.disabled} data-testid={props.testId}>
        {props.submit}
      </button>
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

/**
 * A table with a caption (read by screen readers only unless `showCaption`) and a header row; an
 * empty column name is an actions column, named for screen readers.
 */
export function Table(props: { caption: ComponentChildren; head: string[]; children: ComponentChildren; showCaption?: boolean; class?: string; testId?: string; dataKey?: string }) {
  return (
    <table class={`table ${props.class ?? ""}`} data-testid={props.testId} data-key={props.dataKey}>
      <caption class={props.showCaption ? undefined : "sr-only"}>{props.caption}</caption>
      <thead>
        <tr>
          {props.head.map((name, i) => (
            <th scope="col" key={i}>
              {name || <span class="sr-only">Actions</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
