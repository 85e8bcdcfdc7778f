#pragma once
// Rooms mode (--mode rooms): fan-out through the /rooms JSON protocol.
//
// N member connections join R rooms round-robin (member i is in room
// "r<i % R>"); P publisher connections each publish --publish-rate messages
// per second to room "r<p % R>" with data {"t":<intended send ns>,"p":<p>,"s":<seq>}.
// With --publishers-join yes (the default) publisher p is member p, so it
// receives its own publishes like every other member; with no, publishers
// are P extra connections that join nothing.
//
// Receiving is the hot path: a delivery is checked against the exact bytes
// the member's room implies ({"room":"r<k>","data":{"t":..,"p":..,"s":..}},
// with history on followed by ,"offset":N before the last brace)
// with one memcmp of the fixed prefix and three digit runs, no JSON library.
// Per (member, publisher) a bitset of the sequences seen tells duplicates
// from reorders; losses are expected (publishes x members of that room)
// minus unique deliveries once the drain is over.
#include "options.hpp"

namespace loadgen {

// Runs the whole rooms benchmark; returns the process exit code.
int run_rooms(const options& opts);

}  // namespace loadgen
