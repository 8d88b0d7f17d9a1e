/**
 * Just enough XML for the AWS wire: a writer for responses (query, ec2 and rest-xml protocols) and a
 * reader for rest-xml request bodies (Route 53 change batches, CloudFront distribution configs).
 * The reader keeps element order so a CloudFront config can be stored and echoed back unchanged,
 * the way the real service replaces the whole config on UpdateDistribution.
 */

/** One parsed element. Attributes are kept only for completeness; AWS bodies carry just `xmlns`. */
export interface XmlNode {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlNode[];
  text: string;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, ent: string) => {
    if (ent.startsWith("#x")) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (ent.startsWith("#")) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    return ENTITIES[ent] ?? whole;
  });
}

/** Escapes text for element content and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;",
  );
}

/** Parses a document into its root element; throws on malformed input (the caller turns that into a 400). */
export function parseXml(doc: string): XmlNode {
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  const re =
    /<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(doc)) !== null) {
    const [, cdata, closing, name, attrText, selfClosing, text] = m;
    const top = stack[stack.length - 1];
    if (cdata !== undefined) {
      if (top) top.text += cdata;
    } else if (name !== undefined) {
      if (closing === "/") {
        const open = stack.pop();
        if (open?.name !== name) throw new Error(`mismatched closing tag </${name}>`);
        if (stack.length === 0) root = open;
      } else {
        const attributes: Record<string, string> = {};
        for (const a of (attrText ?? "").matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
          attributes[a[1] ?? ""] = decodeEntities(a[2] ?? a[3] ?? "");
        }
        const node: XmlNode = { name, attributes, children: [], text: "" };
        if (top) top.children.push(node);
        if (selfClosing === "/") {
          if (!top) root = node;
        } else stack.push(node);
      }
    } else if (text !== undefined && top) {
      top.text += decodeEntities(text);
    }
  }
  if (stack.length > 0 || !root) throw new Error("unterminated XML document");
  return root;
}

/** The first child named `name`. */
export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return node?.children.find((c) => c.name === name);
}

/** The text of the child at `path` (names separated by `/`), or undefined when absent. */
export function childText(node: XmlNode | undefined, path: string): string | undefined {
  let cur = node;
  for (const part of path.split("/")) cur = child(cur, part);
  return cur?.text;
}

/** Serialises a parsed node back to XML (namespace attributes dropped: the caller adds its own). */
export function writeNode(node: XmlNode): string {
  const inner = node.children.length > 0 ? node.children.map(writeNode).join("") : escapeXml(node.text);
  return `<${node.name}>${inner}</${node.name}>`;
}

/** Builds an element node; used to make CloudFront configs from scenario data. */
export function el(name: string, ...content: (XmlNode | string | number | boolean | undefined)[]): XmlNode {
  const children: XmlNode[] = [];
  let text = "";
  for (const c of content) {
    if (c === undefined) continue;
    if (typeof c === "object") children.push(c);
    else text += String(c);
  }
  return { name, attributes: {}, children, text };
}

/** A value the response writer understands: nested records, lists, scalars, dates and raw nodes. */
export type XmlValue =
  | string
  | number
  | boolean
  | Date
  | null
  | undefined
  | XmlNode
  | readonly XmlValue[]
  | { readonly [key: string]: XmlValue };

function isNode(v: unknown): v is XmlNode {
  return typeof v === "object" && v !== null && "children" in v && "attributes" in v && "name" in v;
}

/**
 * Writes `value` as the content of element `name`. Lists become repeated children named by
 * `itemName(listKey)` — `member` for the query protocol, `item` for ec2, the model's member
 * locationName for rest-xml. `undefined`/`null` members are omitted, like the real services do.
 */
export function writeXml(name: string, value: XmlValue, itemName: (listKey: string) => string): string {
  if (value === undefined || value === null) return "";
  if (isNode(value)) return writeNode({ ...value, name });
  if (value instanceof Date) return `<${name}>${value.toISOString()}</${name}>`;
  if (Array.isArray(value)) {
    const item = itemName(name);
    return `<${name}>${value.map((v: XmlValue) => writeXml(item, v, itemName)).join("")}</${name}>`;
  }
  if (typeof value === "object") {
    const body = Object.entries(value as Record<string, XmlValue>)
      .map(([k, v]) => writeXml(k, v, itemName))
      .join("");
    return `<${name}>${body}</${name}>`;
  }
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}
