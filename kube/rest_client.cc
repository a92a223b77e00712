#include "kube/rest_client.h"

#include <string>
#include <utility>

#include "api/meta.h"
#include "kube/api_error.h"
#include "kube/url.h"
#include "kube/watch_decoder.h"

namespace kc::kube {
namespace {

constexpr char kJson[] = "application/json";

std::string Describe(std::string_view verb, const Resource& r, std::string_view ns,
                     std::string_view name) {
  std::string out(verb);
  out += " ";
  out += r.resource;
  if (!r.group.empty()) out += "." + r.group;
  if (!name.empty()) {
    out += " \"";
    out += name;
    out += "\"";
  }
  if (r.namespaced && !ns.empty()) {
    out += " in namespace \"";
    out += ns;
    out += "\"";
  }
  return out;
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return kJson;
}

const char* PropagationName(PropagationPolicy p) {
  switch (p) {
    case PropagationPolicy::kForeground:
      return "Foreground";
    case PropagationPolicy::kBackground:
      return "Background";
    case PropagationPolicy::kOrphan:
      return "Orphan";
    case PropagationPolicy::kDefault:
      break;
  }
  return "";
}

void FillTypeMeta(const Resource& r, Json& object) {
  if (!object.contains("apiVersion")) object["apiVersion"] = r.ApiVersion();
  if (!object.contains("kind")) object["kind"] = r.kind;
}

std::string NameOf(const Json& object) { return api::MetaString(object, "name"); }

}  // namespace

RestClient::RestClient(std::shared_ptr<Transport> transport) : transport_(std::move(transport)) {}

StatusOr<Json> RestClient::RoundTrip(HttpRequest request, std::string_view context,
                                     const std::function<void(Json& item)>* list_items) {
  request.headers["Accept"] = kJson;
  StatusOr<HttpResponse> response = transport_->Do(request);
  if (!response.ok()) return response.status().WithContext(context);
  KC_RETURN_IF_ERROR(StatusFromResponse(*response, context));
  if (response->body.empty()) return Json::object();
  Json body;
  if (list_items != nullptr && *list_items) {
    // Each element of the top-level "items" array is transformed as soon
    // as it is parsed (its object_end), before the next one is read.
    bool in_items = false;
    body = Json::parse(
        response->body,
        [&](int depth, Json::parse_event_t event, Json& parsed) {
          if (depth == 1 && event == Json::parse_event_t::key) {
            in_items = parsed.is_string() && parsed.get_ref<const std::string&>() == "items";
          } else if (depth == 2 && in_items && event == Json::parse_event_t::object_end) {
            (*list_items)(parsed);
          }
          return true;
        },
        /*allow_exceptions=*/false);
  } else {
    body = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  }
  if (body.is_discarded()) {
    return InternalError(std::string(context) +
                         ": response is not JSON: " + response->body.substr(0, 200));
  }
  return body;
}

StatusOr<Json> RestClient::Get(const Resource& r, const std::string& ns, const std::string& name) {
  HttpRequest request;
  request.method = "GET";
  request.path = ResourcePath(r, ns, name);
  return RoundTrip(std::move(request), Describe("get", r, ns, name));
}

StatusOr<ListResult> RestClient::List(const Resource& r, const std::string& ns,
                                      const ListOptions& options) {
  Query query;
  query.Add("labelSelector", options.label_selector)
      .Add("fieldSelector", options.field_selector)
      .Add("limit", options.limit > 0 ? std::to_string(options.limit) : "")
      .Add("continue", options.continue_token)
      .Add("resourceVersion", options.resource_version);
  HttpRequest request;
  request.method = "GET";
  request.path = ResourcePath(r, ns) + query.ToString();
  const std::string context = Describe("list", r, ns, "");
  // The transform sees each item with its apiVersion and kind, as
  // ListAll's would.
  std::function<void(Json&)> per_item;
  if (options.item_transform) {
    per_item = [&](Json& item) {
      FillTypeMeta(r, item);
      item = options.item_transform(item);
    };
  }
  KC_ASSIGN_OR_RETURN(Json body, RoundTrip(std::move(request), context, &per_item));
  ListResult result;
  result.items_transformed = static_cast<bool>(options.item_transform);
  result.resource_version = api::MetaString(body, "resourceVersion");
  result.continue_token = api::MetaString(body, "continue");
  auto items = body.find("items");
  if (items != body.end() && items->is_array()) {
    result.items.reserve(items->size());
    for (auto& item : *items) {
      FillTypeMeta(r, item);
      result.items.push_back(std::move(item));
    }
  } else if (items != body.end() && !items->is_null()) {
    return InternalError(context + ": list response has no items array");
  }
  return result;
}

StatusOr<Json> RestClient::Create(const Resource& r, const std::string& ns, const Json& object) {
  Json body = object;
  if (!body.is_object())
    return InvalidArgumentError(Describe("create", r, ns, "") + ": not an object");
  FillTypeMeta(r, body);
  HttpRequest request;
  request.method = "POST";
  request.path = ResourcePath(r, ns);
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  request.content_type = kJson;
  return RoundTrip(std::move(request), Describe("create", r, ns, NameOf(object)));
}

StatusOr<Json> RestClient::Put(const Resource& r, const std::string& ns, const Json& object,
                               std::string_view subresource) {
  const std::string name = NameOf(object);
  const char* verb = subresource.empty() ? "update" : "update status of";
  if (name.empty()) {
    return InvalidArgumentError(Describe(verb, r, ns, "") +
                                ": object has no metadata.name; set it to the object's name");
  }
  Json body = object;
  FillTypeMeta(r, body);
  HttpRequest request;
  request.method = "PUT";
  request.path = ResourcePath(r, ns, name, subresource);
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  request.content_type = kJson;
  return RoundTrip(std::move(request), Describe(verb, r, ns, name));
}

StatusOr<Json> RestClient::Update(const Resource& r, const std::string& ns, const Json& object) {
  return Put(r, ns, object, "");
}

StatusOr<Json> RestClient::UpdateStatus(const Resource& r, const std::string& ns,
                                        const Json& object) {
  return Put(r, ns, object, "status");
}

StatusOr<Json> RestClient::Patch(const Resource& r, const std::string& ns, const std::string& name,
                                 PatchType type, const Json& patch, const PatchOptions& options) {
  const std::string context = Describe("patch", r, ns, name);
  if (name.empty()) return InvalidArgumentError(context + ": empty name");
  Json body = patch;
  Query query;
  if (type == PatchType::kApply) {
    if (options.field_manager.empty()) {
      return InvalidArgumentError(context + ": server-side apply needs PatchOptions.field_manager");
    }
    if (!body.is_object()) return InvalidArgumentError(context + ": apply body is not an object");
    FillTypeMeta(r, body);
    if (NameOf(body).empty()) body["metadata"]["name"] = name;
    query.Add("fieldManager", options.field_manager);
    if (options.force) query.Add("force", "true");
  } else {
    query.Add("fieldManager", options.field_manager);
  }
  HttpRequest request;
  request.method = "PATCH";
  request.path = ResourcePath(r, ns, name, options.subresource) + query.ToString();
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  request.content_type = PatchContentType(type);
  return RoundTrip(std::move(request), context);
}

Status RestClient::Delete(const Resource& r, const std::string& ns, const std::string& name,
                          const DeleteOptions& options) {
  const std::string context = Describe("delete", r, ns, name);
  if (name.empty()) return InvalidArgumentError(context + ": empty name");
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.precondition_uid) body["preconditions"]["uid"] = *options.precondition_uid;
  if (options.precondition_resource_version) {
    body["preconditions"]["resourceVersion"] = *options.precondition_resource_version;
  }
  if (options.propagation != PropagationPolicy::kDefault) {
    body["propagationPolicy"] = PropagationName(options.propagation);
  }
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  HttpRequest request;
  request.method = "DELETE";
  request.path = ResourcePath(r, ns, name);
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  request.content_type = kJson;
  StatusOr<Json> result = RoundTrip(std::move(request), context);
  return result.status();
}

Status RestClient::Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
                         std::stop_token stop,
                         const std::function<bool(const WatchEvent&)>& handler) {
  const std::string context = Describe("watch", r, ns, "");
  Query query;
  query.AddAlways("watch", "1")
      .Add("allowWatchBookmarks", options.allow_bookmarks ? "true" : "")
      .Add("labelSelector", options.label_selector)
      .Add("fieldSelector", options.field_selector)
      .Add("resourceVersion", options.resource_version)
      .Add("timeoutSeconds",
           options.timeout_seconds > 0 ? std::to_string(options.timeout_seconds) : "");
  HttpRequest request;
  request.method = "GET";
  request.path = ResourcePath(r, ns) + query.ToString();
  request.headers["Accept"] = kJson;

  Status event_status;
  auto on_line = [&](std::string_view line) {
    if (line.empty() || line == "\r") return true;
    StatusOr<WatchEvent> event = DecodeWatchLine(line);
    if (!event.ok()) {
      // The server sent something that is not a watch event: not the caller's fault.
      event_status = InternalError(context + ": " + event.status().message());
      return false;
    }
    if (event->type == WatchEvent::Type::kError) {
      event_status = StatusFromApiStatus(event->object, 500, context);
      return false;
    }
    FillTypeMeta(r, event->object);
    return handler(*event);
  };
  HttpResponse response;
  Status s = transport_->Stream(request, stop, on_line, &response);
  if (!event_status.ok()) return event_status;
  if (!s.ok()) return s.WithContext(context);
  return StatusFromResponse(response, context);
}

}  // namespace kc::kube
