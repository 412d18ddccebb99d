/** Public exports of the graph engine. */
export { StateGraph, CompiledStateGraph } from "./graph.js";
export type { ChannelSpec, StateSpec, StateOf, UpdateOf, NodeFn, NodeResult, Route, Router, CompileOptions, AddNodeOptions } from "./graph.js";
export { START, END, Command, Send } from "./constants.js";
export type { CommandParams } from "./constants.js";
export { addMessages, coerceMessage, prepareMessages, messagesState, RemoveMessage, REMOVE_ALL_MESSAGES } from "./messages.js";
export type {
  Message,
  MessageLike,
  HumanMessage,
  AIMessage,
  SystemMessage,
  ToolMessage,
  ToolResultMessage,
  RemoveMessageObject,
  ToolCall,
  InvalidToolCall,
  BaseMessageFields,
} from "./messages.js";
export { GraphRecursionError, InvalidUpdateError, GraphAbortError, MessageCoercionError } from "./errors.js";
export { copyThreadOps } from "./state.js";
export type { GraphSchemaOptions } from "./schemas.js";
export type * from "./types.js";
