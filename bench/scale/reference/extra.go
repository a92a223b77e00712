package main

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

func resourceOne() resource.Quantity { return resource.MustParse("1") }

// Two workers, as kernelcache-operator's default --workers.
func controllerOptions() controller.Options { return controller.Options{MaxConcurrentReconciles: 2} }
