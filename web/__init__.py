"""The web toolkit the receiver and the operators' surface share: body reading with its
deadline, JSON error answers, JSON and form parsing, the client's address."""
