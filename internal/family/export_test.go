package family

// FormatEIN is formatEIN, for the tests of the external package.
var FormatEIN = formatEIN
