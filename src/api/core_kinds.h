// The core/v1 kinds kept as CoreObjects: their typed fields and the hooks
// their descriptors give the registry. Kubernetes' own rules, in part:
// what a client could rely on (defaults, required fields, value ranges).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/core_object.h"
#include "api/pod.h"
#include "api/reflect.h"
#include "api/registry.h"

namespace trainyard::api {

struct SecretFields {
  static constexpr bool kReflected = true;
  std::string type;                                // "Opaque" by default
  std::map<std::string, std::string> data;         // base64
  std::map<std::string, std::string> string_data;  // merged into data on write
  std::optional<bool> immutable;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("data", s.data);
    v("stringData", s.string_data);
    v("immutable", s.immutable);
  }
};

struct ServicePort {
  static constexpr bool kReflected = true;
  std::string name;
  std::string protocol;  // TCP by default
  std::string app_protocol;
  int32_t port = 0;
  Json target_port;  // a number or a port name; the port by default
  std::optional<int32_t> node_port;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("protocol", s.protocol);
    v("appProtocol", s.app_protocol);
    v("port", s.port);
    v("targetPort", s.target_port);
    v("nodePort", s.node_port);
  }
};

struct ServiceSpec {
  static constexpr bool kReflected = true;
  std::map<std::string, std::string> selector;
  std::vector<ServicePort> ports;
  std::string cluster_ip;  // "None": headless, as the training operator makes them
  std::vector<std::string> cluster_ips;
  std::string type;  // ClusterIP by default
  std::string external_name;
  std::string session_affinity;
  std::optional<bool> publish_not_ready_addresses;
  std::vector<std::string> ip_families;
  std::string ip_family_policy;
  std::string internal_traffic_policy;
  std::string external_traffic_policy;
  // Kept as sent: meaningful only to a cluster's load balancers.
  Json external_ips;
  Json load_balancer_ip;
  Json load_balancer_source_ranges;
  Json load_balancer_class;
  Json allocate_load_balancer_node_ports;
  Json health_check_node_port;
  Json session_affinity_config;
  Json traffic_distribution;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("selector", s.selector);
    v("ports", s.ports);
    v("clusterIP", s.cluster_ip);
    v("clusterIPs", s.cluster_ips);
    v("type", s.type);
    v("externalName", s.external_name);
    v("sessionAffinity", s.session_affinity);
    v("publishNotReadyAddresses", s.publish_not_ready_addresses);
    v("ipFamilies", s.ip_families);
    v("ipFamilyPolicy", s.ip_family_policy);
    v("internalTrafficPolicy", s.internal_traffic_policy);
    v("externalTrafficPolicy", s.external_traffic_policy);
    v("externalIPs", s.external_ips);
    v("loadBalancerIP", s.load_balancer_ip);
    v("loadBalancerSourceRanges", s.load_balancer_source_ranges);
    v("loadBalancerClass", s.load_balancer_class);
    v("allocateLoadBalancerNodePorts", s.allocate_load_balancer_node_ports);
    v("healthCheckNodePort", s.health_check_node_port);
    v("sessionAffinityConfig", s.session_affinity_config);
    v("trafficDistribution", s.traffic_distribution);
  }
};

struct ServiceFields {
  static constexpr bool kReflected = true;
  ServiceSpec spec;
  Json status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
};

struct PersistentVolumeClaimSpec {
  static constexpr bool kReflected = true;
  std::vector<std::string> access_modes;
  ResourceRequirements resources;
  std::optional<std::string> storage_class_name;
  std::string volume_name;
  std::string volume_mode;  // Filesystem by default
  Json selector;
  Json data_source;
  Json data_source_ref;
  Json volume_attributes_class_name;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("accessModes", s.access_modes);
    v("resources", s.resources);
    v("storageClassName", s.storage_class_name);
    v("volumeName", s.volume_name);
    v("volumeMode", s.volume_mode);
    v("selector", s.selector);
    v("dataSource", s.data_source);
    v("dataSourceRef", s.data_source_ref);
    v("volumeAttributesClassName", s.volume_attributes_class_name);
  }
};

struct PersistentVolumeClaimFields {
  static constexpr bool kReflected = true;
  PersistentVolumeClaimSpec spec;
  Json status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
};

// The descriptors' hooks for each kind.
ObjectHooks SecretHooks();
ObjectHooks ServiceHooks();
ObjectHooks PersistentVolumeClaimHooks();

}  // namespace trainyard::api
