-- hello: every rank says who it is (run with mpirun -np N for several ranks).
print(("hello from rank %d of %d (iris-lua %s)"):format(iris.rank(), iris.world_size(), iris.version))
