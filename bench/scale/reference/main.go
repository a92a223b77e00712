// kc-reference-operator: a yardstick for bench/scale, not a product.
//
// The smallest controller-runtime operator that does the same watching and
// the same work per event as kernelcache-operator on the scale rig:
// informers on Nodes, Pods, Jobs (kernelcache.io/component) and
// KernelCaches (unstructured); one reconcile per KernelCache; for every GPU
// fingerprint among the Ready, schedulable nodes its spec.nodeSelector
// selects, one warmup Job (label kernelcache.io/fingerprint); one status
// write (status.fingerprints + a Ready condition), only when it changed.
// See bench/scale/README.md for what it does not do.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var kcGVK = schema.GroupVersionKind{Group: "kernelcache.io", Version: "v1alpha1", Kind: "KernelCache"}

// The GPU Feature Discovery labels the fingerprint is made of (core/fingerprint.h).
var fpLabels = []string{
	"nvidia.com/gpu.product", "nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor",
	"nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.runtime-version.full", "kubernetes.io/arch",
}

func fingerprint(n *corev1.Node, image string) (string, bool) {
	var b strings.Builder
	for _, k := range fpLabels {
		v, ok := n.Labels[k]
		if !ok {
			return "", false
		}
		b.WriteString(k + "=" + v + "\n")
	}
	b.WriteString(image)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])[:16], true
}

func ready(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

type reconciler struct {
	c      client.Client
	image  string
	writes int
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kc := &unstructured.Unstructured{}
	kc.SetGroupVersionKind(kcGVK)
	if err := r.c.Get(ctx, req.NamespacedName, kc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	sel, _, _ := unstructured.NestedStringMap(kc.Object, "spec", "nodeSelector")
	image, _, _ := unstructured.NestedString(kc.Object, "spec", "image")
	var nodes corev1.NodeList
	if err := r.c.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(sel)}); err != nil {
		return reconcile.Result{}, err
	}
	type fpInfo struct {
		node  *corev1.Node
		count int
	}
	fps := map[string]*fpInfo{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !ready(n) {
			continue
		}
		id, ok := fingerprint(n, image)
		if !ok {
			continue
		}
		if fps[id] == nil {
			fps[id] = &fpInfo{node: n}
		}
		fps[id].count++
	}
	var jobs batchv1.JobList
	if err := r.c.List(ctx, &jobs, client.InNamespace(req.Namespace),
		client.MatchingLabels{"kernelcache.io/name": req.Name, "kernelcache.io/component": "warmup"}); err != nil {
		return reconcile.Result{}, err
	}
	byFp := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		byFp[jobs.Items[i].Labels["kernelcache.io/fingerprint"]] = &jobs.Items[i]
	}
	ids := make([]string, 0, len(fps))
	for id := range fps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var list []interface{}
	allReady := len(ids) > 0
	for _, id := range ids {
		state := "Warming"
		if j := byFp[id]; j == nil {
			if err := r.c.Create(ctx, r.job(kc, id, fps[id].node)); err != nil && !apierrors.IsAlreadyExists(err) {
				return reconcile.Result{}, err
			}
		} else if j.Status.Succeeded > 0 {
			state = "Ready"
		}
		if state != "Ready" {
			allReady = false
		}
		list = append(list, map[string]interface{}{"id": id, "nodes": int64(fps[id].count), "state": state})
	}
	cond := map[string]interface{}{"type": "Ready", "status": "False", "reason": "Warming",
		"message": "warming " + fmt.Sprint(len(ids)) + " fingerprints"}
	if allReady {
		cond = map[string]interface{}{"type": "Ready", "status": "True", "reason": "Ready",
			"message": fmt.Sprint(len(ids)) + " fingerprints ready"}
	}
	have, _, _ := unstructured.NestedMap(kc.Object, "status")
	cond["lastTransitionTime"] = metav1.Now().UTC().Format("2006-01-02T15:04:05Z")
	if old, ok := have["conditions"].([]interface{}); ok && len(old) == 1 {
		if o, ok := old[0].(map[string]interface{}); ok && o["status"] == cond["status"] {
			cond["lastTransitionTime"] = o["lastTransitionTime"]
		}
	}
	want := map[string]interface{}{"fingerprints": list, "conditions": []interface{}{cond}}
	if equalJSON(have, want) {
		return reconcile.Result{}, nil
	}
	patch, _ := json.Marshal(map[string]interface{}{"status": want})
	r.writes++
	return reconcile.Result{}, r.c.Status().Patch(ctx, kc, client.RawPatch(types.MergePatchType, patch))
}

func equalJSON(a, b interface{}) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y interface{}
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

func (r *reconciler) job(kc *unstructured.Unstructured, id string, n *corev1.Node) *batchv1.Job {
	sel := map[string]string{}
	for _, k := range fpLabels {
		sel[k] = n.Labels[k]
	}
	lbl := map[string]string{"kernelcache.io/name": kc.GetName(), "kernelcache.io/component": "warmup",
		"kernelcache.io/fingerprint": id}
	image, _, _ := unstructured.NestedString(kc.Object, "spec", "image")
	zero := int32(0)
	t := true
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "ref-" + kc.GetName() + "-" + id, Namespace: kc.GetNamespace(), Labels: lbl,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: kcGVK.GroupVersion().String(), Kind: kcGVK.Kind,
				Name: kc.GetName(), UID: kc.GetUID(), Controller: &t}}},
		Spec: batchv1.JobSpec{BackoffLimit: &zero, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: lbl},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: sel,
				Containers: []corev1.Container{{Name: "seal", Image: r.image, Args: []string{"seal", "--fingerprint", id},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resourceOne()}}}},
				InitContainers: []corev1.Container{{Name: "warmup", Image: image}}}}},
	}
}

func main() {
	metricsAddr := flag.String("metrics-bind-address", "127.0.0.1:0", "controller-runtime metrics (rest_client_requests_total)")
	image := flag.String("initwarm-image", "kc.local/initwarm:test", "seal container image")
	workers := flag.Int("workers", 4, "concurrent reconciles (kernelcache-operator's --workers default)")
	flag.Parse()
	if *workers < 1 || *workers > 64 {
		fmt.Fprintln(os.Stderr, "-workers: out of range 1..64")
		os.Exit(2)
	}
	cfg, err := ctrl.GetConfig() // --kubeconfig (registered by controller-runtime)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(1)
	}
	cfg.UserAgent = "kc-reference-operator"
	cfg.QPS, cfg.Burst = 50, 100
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	warmupSel, _ := labels.Parse("kernelcache.io/component")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// Read KernelCaches (unstructured) from the informer cache too.
		Client:  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics: server.Options{BindAddress: *metricsAddr},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}: {Label: warmupSel},
		}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
	r := &reconciler{c: mgr.GetClient(), image: *image}
	kc := &unstructured.Unstructured{}
	kc.SetGroupVersionKind(kcGVK)
	all := func(ctx context.Context, _ client.Object) []reconcile.Request {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(kcGVK.GroupVersion().WithKind("KernelCacheList"))
		if err := mgr.GetClient().List(ctx, l); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(l.Items))
		for _, i := range l.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: i.GetNamespace(), Name: i.GetName()}})
		}
		return out
	}
	byOwnerLabel := func(_ context.Context, o client.Object) []reconcile.Request {
		if n := o.GetLabels()["kernelcache.io/name"]; n != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: n}}}
		}
		return nil
	}
	err = ctrl.NewControllerManagedBy(mgr).For(kc).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(all)).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(byOwnerLabel)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(byOwnerLabel)).
		WithOptions(controllerOptions(*workers)).
		Complete(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}
