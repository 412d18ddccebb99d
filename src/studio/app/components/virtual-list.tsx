/**
 * A list that keeps only the rows in view (plus a few) in the DOM: fixed-height rows, absolutely
 * placed in a box as tall as all of them, inside its own scrolling container. Keyboard: the up and
 * down arrows, Page Up/Down, Home and End move the focus between rows, rendering the one reached
 * (D116).
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useViewport, visibleRows } from "./viewport.js";

export function VirtualList<T>(props: {
  items: readonly T[];
  rowHeight: number;
  /** Accessible name of the list. */
  label: string;
  /** One row's content: focusable elements inside get the arrow keys' focus (the first one). */
  render(item: T, index: number): ComponentChildren;
  keyOf(item: T, index: number): string;
  /** Called when the last rows come into view (to load more). */
  onEnd?(): void;
  /** Row to bring into view when it changes (e.g. the selected one). */
  scrollTo?: number;
  class?: string;
  testId?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { view, onScroll, setView } = useViewport(box);
  const [focus, setFocus] = useState<number | null>(null);
  // The row the keys last moved to, until it is focused (keys pressed faster than it is drawn add up).
  const target = useRef<number | null>(null);
  const { items, rowHeight } = props;

  useEffect(() => {
    const el = box.current;
    if (!el || props.scrollTo === undefined || props.scrollTo < 0) return;
    const top = props.scrollTo * rowHeight;
    if (top < el.scrollTop || top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, top - el.clientHeight / 2);
  }, [props.scrollTo]);

  const { first, last } = visibleRows(view, rowHeight, items.length);

  useEffect(() => {
    if (props.onEnd && items.length && last >= items.length - 1) props.onEnd();
  }, [last, items.length]);

  // After an arrow key moved past the rendered rows, focus the row once it is drawn.
  useEffect(() => {
    if (focus === null) return;
    if (focusRow(focus)) setFocus(null);
  }, [focus, first, last]);

  /** Focuses the row's first control if it is drawn. */
  const focusRow = (index: number): boolean => {
    const row = box.current?.querySelector<HTMLElement>(`[data-index="${index}"]`);
    const control = row?.querySelector<HTMLElement>("a, button, [tabindex]") ?? row;
    if (!control) return false;
    control.focus({ preventScroll: true });
    if (target.current === index) target.current = null;
    return true;
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>("[data-index]");
    if (!row || !items.length) return;
    const at = target.current ?? Number(row.dataset.index);
    const page = Math.max(1, Math.floor(view.height / rowHeight) - 1);
    const to =
      e.key === "ArrowDown" ? at + 1 : e.key === "ArrowUp" ? at - 1 : e.key === "PageDown" ? at + page : e.key === "PageUp" ? at - page : e.key === "Home" ? 0 : e.key === "End" ? items.length - 1 : null;
    if (to === null) return;
    e.preventDefault();
    const index = Math.max(0, Math.min(items.length - 1, to));
    const el = box.current!;
    const top = index * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
    target.current = index;
    if (!focusRow(index)) {
      setView({ top: el.scrollTop, height: el.clientHeight });
      setFocus(index);
    }
  };

  const rows = [];
  for (let i = first; i < last; i++) {
    const item = items[i]!;
    rows.push(
      <li key={props.keyOf(item, i)} data-index={i} aria-setsize={items.length} aria-posinset={i + 1} style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
        {props.render(item, i)}
      </li>,
    );
  }
  return (
    <div ref={box} class={`vlist ${props.class ?? ""}`} onScroll={onScroll} onKeyDown={onKeyDown} data-testid={props.testId}>
      <ol aria-label={props.label} style={{ height: `${items.length * rowHeight}px` }}>
        {rows}
      </ol>
    </div>
  );
}
