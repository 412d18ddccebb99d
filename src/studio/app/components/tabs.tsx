/** Tabs (WAI-ARIA tabs pattern): arrow keys, Home and End move between tabs; the panel follows. */
import type { ComponentChildren } from "preact";
import { useId, useRef } from "preact/hooks";

export function Tabs(props: { label: string; tabs: Array<[id: string, label: string]>; current: string; onSelect(id: string): void; children: ComponentChildren }) {
  const base = useId();
  const list = useRef<HTMLDivElement>(null);
  const onKeyDown = (e: KeyboardEvent) => {
    const at = props.tabs.findIndex(([id]) => id === props.current);
    const n = props.tabs.length;
    const to = e.key === "ArrowRight" ? (at + 1) % n : e.key === "ArrowLeft" ? (at - 1 + n) % n : e.key === "Home" ? 0 : e.key === "End" ? n - 1 : -1;
    if (to < 0) return;
    e.preventDefault();
    props.onSelect(props.tabs[to]![0]);
    requestAnimationFrame(() => list.current?.querySelector<HTMLElement>(`[data-tab="${props.tabs[to]![0]}"]`)?.focus());
  };
  return (
    <div class="tabs">
      <div role="tablist" aria-label={props.label} ref={list} onKeyDown={onKeyDown}>
        {props.tabs.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`${base}-tab-${id}`}
            data-tab={id}
            aria-selected={id === props.current}
            aria-controls={`${base}-panel`}
            tabIndex={id === props.current ? 0 : -1}
            onClick={() => props.onSelect(id)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${props.current}`} tabIndex={0} class="tabpanel">
        {props.children}
      </div>
    </div>
  );
}
