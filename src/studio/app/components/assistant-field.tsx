/**
 * The assistant a run uses: an assistant id or a graph id (its default assistant), typed or picked
 * from the assistants the user may see (a user whose auth hides the graphs' default assistants can
 * still type a graph id).
 */
import { useId } from "preact/hooks";
import { useLoad, useStudio } from "../context.js";
import { shortId } from "../format.js";

export function AssistantField(props: { value: string; onChange(value: string): void; testId?: string; fallback?: string }) {
  const { api } = useStudio();
  const assistants = useLoad((signal) => api.client.assistants.search({ limit: 100, signal }), []);
  const id = useId();
  // Left empty, the field means `fallback` (shown as its placeholder): never written into the
  // field, where it would race with the user's typing.
  const effective = props.value || props.fallback || "";
  const known = assistants.data?.find((a) => a.assistant_id === effective);
  return (
    <div class="field">
      <label for={id}>Assistant (id or graph id)</label>
      <input
        id={id}
        list={`${id}-options`}
        class="mono"
        value={props.value}
        placeholder={props.fallback}
        autocomplete="off"
        spellcheck={false}
        aria-describedby={`${id}-which`}
        data-testid={props.testId}
        onInput={(e) => props.onChange((e.target as HTMLInputElement).value.trim())}
      />
      <datalist id={`${id}-options`}>
        {assistants.data?.map((a) => (
          <option key={a.assistant_id} value={a.assistant_id}>
            {`${a.name || shortId(a.assistant_id)} (${a.graph_id})`}
          </option>
        ))}
      </datalist>
      <small id={`${id}-which`} class="hint">
        {known ? `${known.name} · graph ${known.graph_id} · v${known.version}` : effective ? "A graph id, or an assistant not listed" : "Type or pick one"}
      </small>
    </div>
  );
}
