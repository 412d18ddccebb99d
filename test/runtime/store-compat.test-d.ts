/**
 * Type test (D1): `runtime.store` takes every argument the official SDK's `client.store` takes,
 * and returns the items of the wire (snake_case times; the SDK adds camelCase copies client-side).
 */
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expectTypeOf, it } from "vitest";
import type { Item, ItemStore, Runtime, RuntimeClient, SearchItem } from "../../src/index.js";

type Sdk = Client["store"];
type Methods = "putItem" | "getItem" | "deleteItem" | "searchItems" | "listNamespaces";

describe("store SDK compatibility", () => {
  it("accepts the SDK's arguments for every method", () => {
    expectTypeOf<Parameters<Sdk["putItem"]>>().toExtend<Parameters<ItemStore["putItem"]>>();
    expectTypeOf<Parameters<Sdk["getItem"]>>().toExtend<Parameters<ItemStore["getItem"]>>();
    expectTypeOf<Parameters<Sdk["deleteItem"]>>().toExtend<Parameters<ItemStore["deleteItem"]>>();
    expectTypeOf<Parameters<Sdk["searchItems"]>>().toExtend<Parameters<ItemStore["searchItems"]>>();
    expectTypeOf<Parameters<Sdk["listNamespaces"]>>().toExtend<Parameters<ItemStore["listNamespaces"]>>();
    expectTypeOf<keyof Pick<Sdk, Methods>>().toEqualTypeOf<keyof ItemStore>();
  });

  it("is the store of a runtime and of a bound client, returning wire items", () => {
    expectTypeOf<Runtime["store"]>().toEqualTypeOf<ItemStore>();
    expectTypeOf<RuntimeClient["store"]>().toEqualTypeOf<ItemStore>();
    expectTypeOf<Awaited<ReturnType<ItemStore["getItem"]>>>().toEqualTypeOf<Item | null>();
    expectTypeOf<Awaited<ReturnType<ItemStore["searchItems"]>>>().toEqualTypeOf<{ items: SearchItem[] }>();
    expectTypeOf<Item>().toEqualTypeOf<{ namespace: string[]; key: string; value: Record<string, unknown>; created_at: string; updated_at: string }>();
    expectTypeOf<Awaited<ReturnType<ItemStore["listNamespaces"]>>>().toEqualTypeOf<Awaited<ReturnType<Sdk["listNamespaces"]>>>();
  });
});
