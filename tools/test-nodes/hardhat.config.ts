// `hardhat node` needs a project: this one only serves a local EDR chain to the relay tests (test/helpers/hardhat.ts).
export default {}
