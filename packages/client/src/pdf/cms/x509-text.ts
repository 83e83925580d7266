// Certificates as a person reads them: the subject's names, most specific first.
import type { Certificate, RelativeDistinguishedNames } from 'pkijs'

const NAME_TYPES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '1.2.840.113549.1.9.1': 'E',
}

/** `CN=…, O=…, C=…`, as readers write a certificate's subject. */
export function subjectText(certificate: Certificate): string {
  return nameText(certificate.subject)
}

export function nameText(name: RelativeDistinguishedNames): string {
  return name.typesAndValues
    .map((entry) => `${NAME_TYPES[entry.type] ?? entry.type}=${String(entry.value.valueBlock.value)}`)
    .reverse()
    .join(', ')
}

/** The subject's common name, else its whole subject. */
export function commonName(certificate: Certificate): string {
  const entry = certificate.subject.typesAndValues.find((value) => value.type === '2.5.4.3')
  return entry ? String(entry.value.valueBlock.value) : subjectText(certificate)
}
