// Distinguished names built as readers expect them: each attribute its own RDN, in the order given (most general
// first), each in the string type its standard names: PrintableString for a country, IA5String for an e-mail
// address, UTF8String otherwise. Built as DER and parsed, because pkijs would put attributes it is given one by one
// into a single multi-valued RDN (`C=ZZ + O=… + CN=…`).
import { Set as Asn1Set, IA5String, PrintableString, Sequence, Utf8String } from 'asn1js'
import { AttributeTypeAndValue, RelativeDistinguishedNames } from 'pkijs'

export const NAME_OID = {
  country: '2.5.4.6',
  organization: '2.5.4.10',
  commonName: '2.5.4.3',
  emailAddress: '1.2.840.113549.1.9.1',
} as const

export function distinguishedName(
  entries: readonly (readonly [type: string, value: string])[],
): RelativeDistinguishedNames {
  const encoded = (type: string, value: string) =>
    type === NAME_OID.country
      ? new PrintableString({ value })
      : type === NAME_OID.emailAddress
        ? new IA5String({ value })
        : new Utf8String({ value })
  const name = new Sequence({
    value: entries.map(
      ([type, value]) =>
        new Asn1Set({ value: [new AttributeTypeAndValue({ type, value: encoded(type, value) }).toSchema()] }),
    ),
  })
  return RelativeDistinguishedNames.fromBER(name.toBER(false))
}
