// Which request headers a worker is told about, and how repeats are kept.
//
// The link contract (ConnectionOpened.headers) is a map, one value per
// name, so a header that appears more than once is joined into one value
// as RFC 9110 §5.3 allows: with ", ", except Cookie, whose pairs are joined
// with "; " (RFC 6265 §5.4). Nothing is dropped: an app sees every copy.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/message.hpp>

namespace fg::http {

// Origin, Cookie and the headers named in `extra` (lower-case), in the
// order of their first appearance, with lower-case names.
std::vector<std::pair<std::string, std::string>> forwarded_headers(const boost::beast::http::request_header<>& req,
                                                                   std::span<const std::string> extra);

}  // namespace fg::http
