/**
 * Two texts side by side as one diff (jsdiff): removed parts struck through, added parts
 * underlined, each also named for screen readers. Line diff for structured text (JSON), word
 * diff for prose.
 */
import { diffLines, diffWordsWithSpace } from "diff";

export function TextDiff(props: { before: string; after: string; mode?: "lines" | "words"; label: string; testId?: string }) {
  const parts = (props.mode ?? "lines") === "lines" ? diffLines(props.before, props.after) : diffWordsWithSpace(props.before, props.after);
  const changed = parts.some((p) => p.added || p.removed);
  return (
    <pre class="diff" tabIndex={0} aria-label={props.label} data-testid={props.testId ?? "diff"}>
      {!changed && <span class="muted">{"(identical)\n"}</span>}
      {parts.map((p, i) =>
        p.added ? (
          <ins key={i}>
            <span class="sr-only">added: </span>
            {p.value}
          </ins>
        ) : p.removed ? (
          <del key={i}>
            <span class="sr-only">removed: </span>
            {p.value}
          </del>
        ) : (
          <span key={i}>{p.value}</span>
        ),
      )}
    </pre>
  );
}
