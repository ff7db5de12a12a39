package validate

// PagePayloadBytes bounds the payloads one answer that lists them may
// hold: a message browse, a page of dead letters or of traces, a streams
// state read. Past it a list comes back cut and says so (a state read,
// which the SDK takes for the whole state, is refused instead), so that
// no request can make a replica hold more.
const PagePayloadBytes = 64 << 20
