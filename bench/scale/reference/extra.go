package main

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

func resourceOne() resource.Quantity { return resource.MustParse("1") }

// Concurrent reconciles (-workers), by default kernelcache-operator's default --workers.
func controllerOptions(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: workers}
}
