(* The tests' checks: each names what it checks, and finish prints the
   closing line "N passed, N failed" and exits 1 on a failure. *)

let passed = ref 0
let failed = ref 0

let check what ok =
  if ok then incr passed
  else begin
    incr failed;
    Printf.printf "FAIL: %s\n%!" what
  end

(* Whether f () raises an exception that pred accepts. *)
let raises what pred f =
  match f () with
  | _ -> check (what ^ ": raised nothing") false
  | exception e ->
      let ok = pred e in
      if not ok then Printf.printf "  (%s raised %s)\n" what (Printexc.to_string e);
      check what ok

let invalid = function Invalid_argument _ -> true | _ -> false

let finish name =
  Printf.printf "%s: %d passed, %d failed\n%!" name !passed !failed;
  exit (if !failed = 0 then 0 else 1)

(* Where a test cannot run here: it says why and passes, as dune has no
   skip status. *)
let skip why =
  Printf.printf "SKIP: %s\n%!" why;
  exit 0
