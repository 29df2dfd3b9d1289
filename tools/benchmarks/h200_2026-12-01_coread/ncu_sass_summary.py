import csv,sys,collections,re
f=sys.argv[1]
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
def g(r,k):
    try: return float(r[ix[k]])
    except: return 0.0
total_samples=sum(g(r,'Warp Stall Sampling (All Samples)') for r in data)
# histogram of exec counts
cnt=collections.Counter()
for r in data:
    e=int(g(r,'Instructions Executed'))
    cnt[e]+=1
print('total samples',total_samples)
print('most common exec counts:',cnt.most_common(8))
# hot region: instructions whose exec count equals the mode among large counts
big=[e for e,c in cnt.most_common(30) if e>1000]
stall_cols=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
for target in big[:3]:
    sel=[r for r in data if int(g(r,'Instructions Executed'))==target]
    addrs=[int(r[0],16) for r in sel]
    print(f'\n== exec count {target}: {len(sel)} instructions, addr {min(addrs):x}-{max(addrs):x}')
    s=sum(g(r,'Warp Stall Sampling (All Samples)') for r in sel)
    print(f'samples {s:.0f} ({100*s/total_samples:.1f}% of all)')
    st=collections.Counter()
    for r in sel:
        for c in stall_cols: st[c]+=g(r,c)
    print('stalls:',', '.join(f'{k[6:]} {v:.0f}' for k,v in st.most_common(8)))
    ops=collections.Counter(r[1].split()[0] if not r[1].strip().startswith('@') else r[1].split()[1] for r in sel)
    print('opcodes:',', '.join(f'{k} {v}' for k,v in ops.most_common(18)))
    top=sorted(sel,key=lambda r:-g(r,'Warp Stall Sampling (All Samples)'))[:12]
    for r in top:
        st1=max(stall_cols,key=lambda c:g(r,c))
        print(f'   {g(r,"Warp Stall Sampling (All Samples)"):6.0f} {st1[6:]:14s} {r[1].strip()[:90]}')
