/**
 * A table that keeps only the rows in view (plus a few) in the DOM: fixed-height rows between two
 * spacer rows, inside its own scrolling box, the header sticking to its top. `aria-rowcount` and
 * `aria-rowindex` tell assistive technology where the drawn rows sit in the whole table.
 */
import type { ComponentChildren } from "preact";
import { useRef } from "preact/hooks";
import { useViewport, visibleRows } from "./viewport.js";

export function VirtualTable<T>(props: {
  caption: string;
  head: ComponentChildren;
  columns: number;
  rows: readonly T[];
  rowHeight: number;
  keyOf(row: T): string;
  /** The cells of one row (`<td>`/`<th>` elements). */
  render(row: T, index: number): ComponentChildren;
  rowClass?(row: T): string;
  testId?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { view, onScroll } = useViewport(box);
  const { rows, rowHeight } = props;
  const { first, last } = visibleRows(view, rowHeight, rows.length);
  const drawn = [];
  for (let i = first; i < last; i++) {
    const row = rows[i]!;
    drawn.push(
      <tr key={props.keyOf(row)} aria-rowindex={i + 2} class={props.rowClass?.(row)} style={{ height: `${rowHeight}px` }} data-index={i}>
        {props.render(row, i)}
      </tr>,
    );
  }
  return (
    <div ref={box} class="vtable" onScroll={onScroll} data-testid={props.testId}>
      <table class="table" aria-rowcount={rows.length + 1}>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr aria-rowindex={1}>{props.head}</tr>
        </thead>
        <tbody>
          {first > 0 && (
            <tr aria-hidden="true" class="spacer" style={{ height: `${first * rowHeight}px` }}>
              <td colSpan={props.columns} />
            </tr>
          )}
          {drawn}
          {last < rows.length && (
            <tr aria-hidden="true" class="spacer" style={{ height: `${(rows.length - last) * rowHeight}px` }}>
              <td colSpan={props.columns} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
