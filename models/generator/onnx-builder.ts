/**
 * Thin helpers over the protobufjs ONNX classes: just enough to write small inference
 * graphs by hand without pulling Python/onnx into the build. Tensors are written to
 * raw_data little-endian explicitly (DataView), so the bytes do not depend on host endianness.
 */
import { onnx } from 'onnx-proto';

const DataType = onnx.TensorProto.DataType;
const AttrType = onnx.AttributeProto.AttributeType;

/** A dimension is fixed (number) or symbolic (string, e.g. "batch"). */
export type Dim = number | string;
export type AttrValue = number | number[];

export const FLOAT = DataType.FLOAT;
export const INT64 = DataType.INT64;

export function valueInfo(
  name: string,
  elemType: number,
  dims: readonly Dim[],
): onnx.IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

export function floatTensor(
  name: string,
  dims: readonly number[],
  data: ArrayLike<number>,
): onnx.ITensorProto {
  assertSize(name, dims, data.length);
  const raw = new Uint8Array(data.length * 4);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i], true);
  return { name, dims: [...dims], dataType: FLOAT, rawData: raw };
}

export function int64Tensor(
  name: string,
  dims: readonly number[],
  data: readonly number[],
): onnx.ITensorProto {
  assertSize(name, dims, data.length);
  const raw = new Uint8Array(data.length * 8);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < data.length; i++) view.setBigInt64(i * 8, BigInt(data[i]), true);
  return { name, dims: [...dims], dataType: INT64, rawData: raw };
}

/** Attributes: integers become INT/INTS, other numbers FLOAT (Gemm alpha/beta style). */
function attribute(name: string, value: AttrValue): onnx.IAttributeProto {
  if (Array.isArray(value)) return { name, type: AttrType.INTS, ints: value };
  if (Number.isInteger(value)) return { name, type: AttrType.INT, i: value };
  return { name, type: AttrType.FLOAT, f: value };
}

function assertSize(name: string, dims: readonly number[], length: number): void {
  const expected = dims.reduce((a, b) => a * b, 1);
  if (expected !== length) throw new Error(`${name}: ${length} values for dims [${dims}]`);
}

/** Collects nodes and initializers in insertion order; that order is what gets serialized. */
export class GraphBuilder {
  readonly nodes: onnx.INodeProto[] = [];
  readonly initializers: onnx.ITensorProto[] = [];
  readonly inputs: onnx.IValueInfoProto[] = [];
  readonly outputs: onnx.IValueInfoProto[] = [];

  input(name: string, elemType: number, dims: readonly Dim[]): string {
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  output(name: string, elemType: number, dims: readonly Dim[]): string {
    this.outputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  initializer(tensor: onnx.ITensorProto): string {
    this.initializers.push(tensor);
    return tensor.name as string;
  }

  /** Adds one node; node names equal their first output, which keeps them unique. */
  node(
    opType: string,
    inputs: string[],
    output: string,
    attrs: Record<string, AttrValue> = {},
  ): string {
    const attribute_ = Object.keys(attrs).map((k) => attribute(k, attrs[k]));
    this.nodes.push({
      name: output,
      opType,
      input: inputs,
      output: [output],
      attribute: attribute_,
    });
    return output;
  }
}

export interface ModelSpec {
  graphName: string;
  docString: string;
  metadata: Record<string, string>;
}

export const IR_VERSION = 8;
export const OPSET = 17;
export const PRODUCER = 'ranker-model-generator';

export function encodeModel(graph: GraphBuilder, spec: ModelSpec): Uint8Array {
  const model: onnx.IModelProto = {
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: PRODUCER,
    producerVersion: '1.0.0',
    docString: spec.docString,
    // Sorted so the bytes never depend on how the caller built the object.
    metadataProps: Object.keys(spec.metadata)
      .sort()
      .map((key) => ({ key, value: spec.metadata[key] })),
    graph: {
      name: spec.graphName,
      docString: spec.docString,
      node: graph.nodes,
      initializer: graph.initializers,
      input: graph.inputs,
      output: graph.outputs,
    },
  };
  return onnx.ModelProto.encode(model).finish();
}
