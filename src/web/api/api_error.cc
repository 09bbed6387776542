#include "web/api/api_error.h"

#include <cstdio>

#include "promql/parser/quote.h"

namespace gpumon::web::api {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kCanceled:
      return "canceled";
    case ErrorKind::kExecution:
      return "execution";
    case ErrorKind::kBadData:
      return "bad_data";
    case ErrorKind::kInternal:
      return "internal";
    case ErrorKind::kUnavailable:
      return "unavailable";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kNotAcceptable:
      return "not_acceptable";
  }
  return "internal";
}

int HttpStatusOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadData:
      return 400;
    case ErrorKind::kExecution:
      return 422;
    case ErrorKind::kCanceled:
      return 499;  // nginx's "client closed request", as Prometheus uses
    case ErrorKind::kTimeout:
    case ErrorKind::kUnavailable:
      return 503;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kNotAcceptable:
      return 406;
    case ErrorKind::kInternal:
      return 500;
  }
  return 500;
}

ErrorKind FromEngine(promql::ErrorType type) {
  switch (type) {
    case promql::ErrorType::kTimeout:
      return ErrorKind::kTimeout;
    case promql::ErrorType::kCanceled:
      return ErrorKind::kCanceled;
    case promql::ErrorType::kExecution:
      return ErrorKind::kExecution;
    case promql::ErrorType::kBadData:
      return ErrorKind::kBadData;
    case promql::ErrorType::kInternal:
    case promql::ErrorType::kNone:
      return ErrorKind::kInternal;
  }
  return ErrorKind::kInternal;
}

ApiError InvalidParam(std::string_view name, std::string_view message) {
  return {ErrorKind::kBadData, "invalid parameter " + GoQuote(name) + ": " + std::string(message)};
}

std::string GoQuote(std::string_view s) { return promql::internal::GoQuote(s); }

}  // namespace gpumon::web::api
